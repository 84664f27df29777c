/** Injection tokens of the lab service module. */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
export const STORE = Symbol('STORE');
export const DOWNSTREAM = Symbol('DOWNSTREAM');
