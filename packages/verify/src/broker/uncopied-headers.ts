/**
 * Headers a copy of a JetStream message leaves out: JetStream would drop a copy that
 * carries the original's message id inside its duplicate window, or refuse one whose
 * expectations (last sequence, last message id) no longer hold. A copy stands for a
 * message that did reach the consumer twice, so it must land; a key travelling in one
 * of these headers would not travel with it.
 */
export const UNCOPIED_HEADERS = /^(?:nats-msg-id|nats-expected-.*)$/i;
