import { kafka } from './kafka';
import { mqtt } from './mqtt';
import { nats } from './nats';
import { rmq } from './rmq';
import type { RpcTransportKey } from './transport-key';

/**
 * Every transport whose messages can carry a key outside the payload, asked
 * in this order: the first that finds one wins. A transport is one file of
 * this folder exporting its `RpcTransportKey`, and one entry here.
 */
export const RPC_TRANSPORTS: readonly RpcTransportKey[] = [rmq, kafka, nats, mqtt];
