import { HeaderName } from '../../header-name';
import type { MicroserviceTransport } from './microservice-transport';

/** The parts of an `MqttContext` the key is read from (an MQTT 5 PUBLISH packet, as mqtt.js decodes it). */
interface MqttContextLike {
  getTopic: () => string;
  getPacket: () => { properties?: { userProperties?: Record<string, string | string[]> } } | undefined;
}

/**
 * MQTT 5: the key is a user property (`idempotency-key`, in any letter case;
 * a repeated property arrives as an array, which the key's parser refuses).
 * MQTT 3.1.1 has no properties: its messages carry the key in the payload.
 */
export const mqtt: MicroserviceTransport = {
  transport: 'MQTT',
  owns(context) {
    const { getTopic, getPacket } = context as Partial<MqttContextLike>;
    return typeof getTopic === 'function' && typeof getPacket === 'function';
  },
  keyOf(context) {
    const properties = (context as MqttContextLike).getPacket()?.properties?.userProperties;
    if (!properties) return undefined;
    const names = Object.keys(properties).filter((name) => name.toLowerCase() === HeaderName.IdempotencyKey);
    if (names.length === 0) return undefined;
    return names.flatMap((name) => properties[name] ?? []);
  },
};
