// The conformance suite's event helpers, shared with the package's own tests.
export { eventually, latch, sleep, track, within, type Latch } from '../../src/testing/async';
