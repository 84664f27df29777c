// The conformance suite's recording observer, shared with the package's own tests.
export { Recorder } from '../../src/testing/recorder';
