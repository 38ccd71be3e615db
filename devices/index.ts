import type { Logger } from '../src/log/index.js';
import type { CardReader } from './reader.js';
import { SimulatedHidDevice } from './sim/hid-device.js';
import { SimulatedPtyTransport } from './sim/pty-transport.js';
import { VIRTUAL_CARD_NAMES, VIRTUAL_CARDS } from './sim/cards.js';
import { ReaderSimulator, type SimulatedReaderControl } from './sim/simulator.js';
import { SimulatedStreamTransport } from './sim/stream-transport.js';
import { HidTransport, type HidDeviceLike } from './transports/hid.js';
import { SerialTransport } from './transports/serial.js';
import type { Transport } from './transports/transport.js';
import type { Track3Layout } from './vivotech2/commands.js';
import { ViVOtech2Reader } from './vivotech2/driver.js';
import { ReaderError } from './reader.js';

export * from './reader.js';
export { VIRTUAL_CARDS, VIRTUAL_CARD_NAMES, type VirtualCard } from './sim/cards.js';
export type { SimulatedReaderControl } from './sim/simulator.js';
export { listSerialPorts, type ListedSerialPort } from './transports/serial.js';
export type { HidDeviceLike } from './transports/hid.js';
export { ViVOtech2Reader } from './vivotech2/driver.js';

/**
 * Reader options: the `reader` section of the configuration (src/config/schema.ts), mapped by the host. devices may
 * not import src/config, so the shape is repeated here.
 */
export interface ReaderOptions {
  readonly kind: 'sim' | 'serial' | 'hid';
  /** Seconds the reader waits for a card after Activate (the host passes it to `activate`). */
  readonly activateTimeoutSeconds: number;
  /** Milliseconds to wait for any reply frame before a READER_TIMEOUT and a resynchronisation. */
  readonly commandTimeoutMs: number;
  /** Idle watchdog ping interval, milliseconds. */
  readonly watchdogMs: number;
  /** Reconnect backoff: first delay and cap, milliseconds. */
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  /** Whether Activate replies carry a track 3 field: NEO 2 readers do, older NEO readers do not. */
  readonly track3: Track3Layout;
  readonly sim: {
    /** Virtual card presented first (a key of VIRTUAL_CARDS). */
    readonly card: string;
    /** `stream`: in-process; `pty`: a real pseudo-terminal through serialport; `hid`: an injected HID device. */
    readonly transport: 'stream' | 'pty' | 'hid';
    /** Milliseconds the simulated cardholder takes to present the card. */
    readonly presentDelayMs: number;
  };
  readonly serial: { readonly path?: string; readonly baudRate: number };
  readonly hid: { readonly vendorId: number; readonly productId?: number };
}

/** The embedded defaults of the configuration's `reader` section. */
export const DEFAULT_READER_OPTIONS: ReaderOptions = {
  kind: 'sim',
  activateTimeoutSeconds: 60,
  commandTimeoutMs: 3_000,
  watchdogMs: 5_000,
  reconnectInitialMs: 250,
  reconnectMaxMs: 10_000,
  track3: 'auto',
  sim: { card: 'n2-contact', transport: 'stream', presentDelayMs: 400 },
  serial: { baudRate: 115_200 },
  hid: { vendorId: 0x0acd },
};

export interface ReaderDeps {
  readonly logger?: Logger;
  /** Opens the HID device instead of node-hid (tests; kind 'hid' only). */
  readonly openHidDevice?: () => Promise<HidDeviceLike>;
  /** The terminal's time zone (IANA), to which the simulator's clock is set (kind 'sim' only; tag 9A). */
  readonly timeZone?: string;
}

/**
 * Why the simulator's card of `options` is refused (a `sim` reader whose card is not a virtual card), or undefined.
 * createReader refuses such options; the start checks them before it opens anything (src/host), so that the refusal
 * names reader.sim.card.
 */
export function unknownVirtualCard(options: Pick<ReaderOptions, 'kind' | 'sim'>): string | undefined {
  if (options.kind !== 'sim' || options.sim.card in VIRTUAL_CARDS) return undefined;
  return `"${options.sim.card}" is not a virtual card; known: ${VIRTUAL_CARD_NAMES.join(', ')}`;
}

const simulators = new WeakMap<CardReader, ReaderSimulator>();

/**
 * Builds the reader the options describe. Nothing is opened until `connect()`. For kind 'sim' the simulator is
 * reachable through {@link getSimulatorControl}.
 * @throws ReaderError READER_UNAVAILABLE when a serial reader has no path or the simulator's card is unknown.
 */
export function createReader(options: ReaderOptions, deps: ReaderDeps = {}): CardReader {
  const driverOptions = {
    commandTimeoutMs: options.commandTimeoutMs,
    watchdogMs: options.watchdogMs,
    reconnectInitialMs: options.reconnectInitialMs,
    reconnectMaxMs: options.reconnectMaxMs,
    track3: options.track3,
  };
  const logger = deps.logger?.child({ component: 'reader' });
  let transport: Transport;
  let simulator: ReaderSimulator | undefined;
  switch (options.kind) {
    case 'serial': {
      const path = options.serial.path;
      if (!path)
        throw new ReaderError('READER_UNAVAILABLE', 'reader.serial.path is required for a serial reader');
      transport = new SerialTransport({ path, baudRate: options.serial.baudRate });
      break;
    }
    case 'hid':
      transport = new HidTransport({
        vendorId: options.hid.vendorId,
        ...(options.hid.productId !== undefined ? { productId: options.hid.productId } : {}),
        ...(deps.openHidDevice ? { openDevice: deps.openHidDevice } : {}),
      });
      break;
    case 'sim': {
      const unknown = unknownVirtualCard(options);
      if (unknown !== undefined) throw new ReaderError('READER_UNAVAILABLE', `reader.sim.card ${unknown}`);
      const sim = new ReaderSimulator({
        card: options.sim.card,
        presentDelayMs: options.sim.presentDelayMs,
        ...(deps.timeZone !== undefined ? { timeZone: deps.timeZone } : {}),
      });
      simulator = sim;
      transport = simulatorTransport(sim, options.sim.transport);
      break;
    }
  }
  const reader = new ViVOtech2Reader(transport, driverOptions, logger);
  if (simulator) simulators.set(reader, simulator);
  return reader;
}

function simulatorTransport(sim: ReaderSimulator, kind: ReaderOptions['sim']['transport']): Transport {
  switch (kind) {
    case 'stream':
      return new SimulatedStreamTransport(sim);
    case 'pty':
      return new SimulatedPtyTransport(sim);
    case 'hid':
      return new HidTransport({
        vendorId: 0x0acd,
        openDevice: () => {
          try {
            return Promise.resolve(new SimulatedHidDevice(sim));
          } catch (e) {
            return Promise.reject(
              new ReaderError(
                'READER_UNAVAILABLE',
                e instanceof Error ? e.message : String(e),
                {},
                { cause: e },
              ),
            );
          }
        },
      });
  }
}

/** The simulator behind a reader created with kind 'sim'; undefined for real readers. */
export function getSimulatorControl(reader: CardReader): SimulatedReaderControl | undefined {
  return simulators.get(reader);
}
