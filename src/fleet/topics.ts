/**
 * The topics of one terminal under the operator's prefix (README, Fleet): `<prefix>/<terminalId>/<leaf>`.
 * - `status` retained, QoS 1: `online`, or `offline` (also the last will the broker publishes when the link dies);
 * - `heartbeat` retained, QoS 0: the terminal's health every `fleet.heartbeatSeconds`;
 * - `events` QoS 1: out of service, back in service, declines after forwarding, recovery results;
 * - `commands` QoS 1: signed commands to the terminal; `replies` QoS 1: its answers, by command id.
 */
export interface TerminalTopics {
  status: string;
  heartbeat: string;
  events: string;
  commands: string;
  replies: string;
}

export const TOPIC_LEAVES = ['status', 'heartbeat', 'events', 'commands', 'replies'] as const;
export type TopicLeaf = (typeof TOPIC_LEAVES)[number];

export function terminalTopics(prefix: string, terminalId: string): TerminalTopics {
  const at = (leaf: TopicLeaf): string => `${prefix}/${terminalId}/${leaf}`;
  return {
    status: at('status'),
    heartbeat: at('heartbeat'),
    events: at('events'),
    commands: at('commands'),
    replies: at('replies'),
  };
}

/** The subscription to one leaf of every terminal under `prefix` (`<prefix>/+/<leaf>`). */
export function everyTerminal(prefix: string, leaf: TopicLeaf): string {
  return `${prefix}/+/${leaf}`;
}

/** The terminal id and leaf of a topic under `prefix`; undefined for any other topic. */
export function parseTopic(
  prefix: string,
  topic: string,
): { terminalId: string; leaf: TopicLeaf } | undefined {
  if (!topic.startsWith(`${prefix}/`)) return undefined;
  const rest = topic.slice(prefix.length + 1).split('/');
  if (rest.length !== 2) return undefined;
  const [terminalId, leaf] = rest;
  if (!terminalId || !(TOPIC_LEAVES as readonly string[]).includes(leaf ?? '')) return undefined;
  return { terminalId, leaf: leaf as TopicLeaf };
}
