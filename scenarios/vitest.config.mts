export { default } from '../vitest.shared.mjs';
