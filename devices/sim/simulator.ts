import { decodeTlv, EmvValueError, localDateTime, TlvError, validateTagValue } from '../../src/emv/index.js';
import { COMMANDS, encodeActivateReply, parseActivateData } from '../vivotech2/commands.js';
import { encodeReaderFrame, MAX_DATA_LENGTH, type RawFrame } from '../vivotech2/frame.js';
import { FrameParser } from '../vivotech2/parser.js';
import { STATUS } from '../vivotech2/status.js';
import { buildVirtualRead, VIRTUAL_CARDS, type VirtualCard, type VirtualPresentation } from './cards.js';

/** What the simulator sends to whoever is attached (a transport endpoint). */
export interface SimulatorLink {
  /** Bytes from the reader to the host. */
  send(bytes: Uint8Array): void;
  /** The reader was unplugged: the link is dead. */
  unplugged(): void;
}

/** How the host and tests steer the simulated reader. */
export interface SimulatedReaderControl {
  /** The virtual card presented at the next Activate (a key of VIRTUAL_CARDS). */
  readonly card: string;
  /**
   * Presents another virtual card from the next Activate on (a `sequence` card from its first step). @throws RangeError
   * for an unknown name.
   */
  setCard(name: string): void;
  /** Milliseconds the simulated cardholder takes to present the card after Activate. */
  setPresentDelay(ms: number): void;
  /** Unplugs the reader: the transport closes, and opening it fails until `plug()`. */
  unplug(): void;
  /** Plugs the reader back in; the driver's next reconnect attempt succeeds. */
  plug(): void;
  readonly plugged: boolean;
  /** Sends line noise to the host now (default: 37 bytes including a partial header). */
  injectGarbage(bytes?: Uint8Array): void;
  /** Makes the reader stop answering (a hung reader) or answer again. */
  setUnresponsive(unresponsive: boolean): void;
  /** CMD/SUBCMD of the last RECEIVED_LIMIT well-formed frames received, oldest first (data omitted: it is not kept). */
  readonly received: readonly { cmd: number; sub: number }[];
  /** Frames the simulator answered with status 0B because another command or a cancel was in progress. */
  readonly refused: number;
}

/** Options of a simulated reader. */
export interface SimulatorOptions {
  /** Virtual card name; default n2-contact. */
  readonly card?: string;
  /** Milliseconds before the card is presented; default 400. */
  readonly presentDelayMs?: number;
  /** Whether Activate replies carry a track 3 field (NEO 2 layout); default true. */
  readonly track3Field?: boolean;
  /** Milliseconds the reader takes to answer a Cancel; default 20. */
  readonly cancelDelayMs?: number;
  /** Firmware version string answered to 29-00. */
  readonly firmware?: string;
  /** The current time, for tag 9A. */
  readonly now?: () => Date;
  /**
   * The time zone of the reader's clock (IANA name), for the date of tag 9A: a reader's clock is set to the
   * terminal's local time, so the date the card sees is the terminal's. Default: the process's zone.
   */
  readonly timeZone?: string;
  /** Whether zero-amount purchases (account verification) are enabled in the reader's configuration; default true. */
  readonly acceptZeroAmount?: boolean;
}

const DEFAULT_GARBAGE = Uint8Array.from([
  0x00, 0xff, 0x56, 0x69, 0x56, 0x4f, 0x74, 0x13, 0x37, 0x56, 0x69, 0x56, 0x4f, 0x74, 0x65, 0x63, 0x68, 0x32,
  0x00, 0x18, 0x00, 0x7f, 0xff, 0x01, 0x02, 0x03, 0x56, 0x56, 0x69, 0x0d, 0x0a, 0x00, 0x00, 0x41, 0x42, 0x43,
  0x44,
]);

/** The Activate TLVs the reader passes to the card (reader-protocol.md, 02-01). */
const ACTIVATE_REQUEST_TAGS = ['9F02', '9F03', '9C', '5F2A', '9F1A'] as const;

/** How many received frames `received` keeps: the watchdog pings every few seconds, for as long as the terminal runs. */
export const RECEIVED_LIMIT = 1000;

function lookup(name: string): VirtualCard {
  const card = VIRTUAL_CARDS[name];
  if (!card)
    throw new RangeError(`unknown virtual card "${name}"; known: ${Object.keys(VIRTUAL_CARDS).join(', ')}`);
  return card;
}

/**
 * A ViVOtech2 reader in software, speaking the protocol byte for byte: it parses host frames with the same codec
 * (frames with a bad CRC get no answer, as on a real reader), answers Ping, firmware version, poll mode, Activate,
 * Get transaction result, Cancel and Get/Set configuration, and refuses what a real reader refuses: any command other
 * than Cancel while an Activate is in progress, and any command while a Cancel is being processed (status 0B).
 */
export class ReaderSimulator implements SimulatedReaderControl {
  private cardName: string;
  private readonly acceptZeroAmount: boolean;
  private presentDelayMs: number;
  private readonly track3Field: boolean;
  private readonly cancelDelayMs: number;
  private readonly firmware: string;
  private readonly now: () => Date;
  /** The zone of the reader's clock (tag 9A). */
  private readonly timeZone: string;
  private link: SimulatorLink | undefined;
  private parser = new FrameParser('host-to-reader');
  private activeTimers: NodeJS.Timeout[] = [];
  private activating = false;
  private cancelling = false;
  private unresponsive = false;
  private isPlugged = true;
  private sequence = 0;
  /** Activates the current card was presented at: the step of a `sequence` card. */
  private presentations = 0;
  private pollMode = 0x00;
  private lastResult: RawFrame | undefined;
  private readonly configuration = new Map<string, Uint8Array>();
  readonly received: { cmd: number; sub: number }[] = [];
  refused = 0;

  constructor(options: SimulatorOptions = {}) {
    this.cardName = options.card ?? 'n2-contact';
    lookup(this.cardName);
    this.presentDelayMs = options.presentDelayMs ?? 400;
    this.track3Field = options.track3Field ?? true;
    this.cancelDelayMs = options.cancelDelayMs ?? 20;
    this.firmware = options.firmware ?? 'NEO2 SIM v1.00.000';
    this.now = options.now ?? (() => new Date());
    this.timeZone = options.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.acceptZeroAmount = options.acceptZeroAmount ?? true;
  }

  get card(): string {
    return this.cardName;
  }

  get plugged(): boolean {
    return this.isPlugged;
  }

  setCard(name: string): void {
    lookup(name);
    this.cardName = name;
    this.presentations = 0;
  }

  setPresentDelay(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('present delay must be a non-negative number');
    this.presentDelayMs = ms;
  }

  setUnresponsive(unresponsive: boolean): void {
    this.unresponsive = unresponsive;
  }

  /**
   * Attaches a transport endpoint (one at a time, like a cable; a new one replaces the old). Returns `deliver` for the
   * host's bytes and `detach` for when the host closes the port (it only detaches this endpoint).
   * @throws Error when the reader is unplugged.
   */
  attach(link: SimulatorLink): { deliver: (bytes: Uint8Array) => void; detach: () => void } {
    if (!this.isPlugged) throw new Error('simulated reader is unplugged');
    this.link = link;
    this.parser = new FrameParser('host-to-reader');
    this.resetTransaction();
    return {
      deliver: (bytes) => {
        if (this.link === link) this.receive(bytes);
      },
      detach: () => {
        if (this.link !== link) return;
        this.link = undefined;
        this.resetTransaction();
      },
    };
  }

  unplug(): void {
    this.isPlugged = false;
    const link = this.link;
    this.link = undefined;
    this.resetTransaction();
    link?.unplugged();
  }

  plug(): void {
    this.isPlugged = true;
  }

  injectGarbage(bytes: Uint8Array = DEFAULT_GARBAGE): void {
    this.link?.send(bytes);
  }

  private resetTransaction(): void {
    for (const t of this.activeTimers) clearTimeout(t);
    this.activeTimers = [];
    this.activating = false;
    this.cancelling = false;
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.activeTimers = this.activeTimers.filter((t) => t !== timer);
      fn();
    }, ms);
    this.activeTimers.push(timer);
  }

  private reply(cmd: number, status: number, data?: Uint8Array): void {
    if (this.unresponsive) return;
    this.link?.send(encodeReaderFrame({ cmd, status, ...(data ? { data } : {}) }));
  }

  private receive(bytes: Uint8Array): void {
    for (const frame of this.parser.push(bytes)) this.onCommand(frame);
  }

  private onCommand(frame: RawFrame): void {
    this.received.push({ cmd: frame.cmd, sub: frame.code });
    if (this.received.length > RECEIVED_LIMIT) this.received.splice(0, this.received.length - RECEIVED_LIMIT);
    const isCancel = frame.cmd === COMMANDS.cancel.cmd && frame.code === COMMANDS.cancel.sub;
    if (this.cancelling || (this.activating && !isCancel)) {
      this.refused++;
      this.reply(frame.cmd, STATUS.COMMAND_NOT_ALLOWED);
      return;
    }
    const sub = frame.code;
    switch (frame.cmd) {
      case COMMANDS.ping.cmd:
        return sub === COMMANDS.ping.sub ? this.reply(frame.cmd, STATUS.OK) : this.unknownSub(frame);
      case COMMANDS.firmwareVersion.cmd:
        return sub === COMMANDS.firmwareVersion.sub
          ? this.reply(frame.cmd, STATUS.OK, Uint8Array.from([...this.firmware].map((c) => c.charCodeAt(0))))
          : this.unknownSub(frame);
      case COMMANDS.setPollMode.cmd:
        if (sub !== COMMANDS.setPollMode.sub) return this.unknownSub(frame);
        if (frame.data.length !== 1 || (frame.data[0] as number) > 1)
          return this.reply(frame.cmd, STATUS.INCORRECT_PARAMETER);
        this.pollMode = frame.data[0] as number;
        return this.reply(frame.cmd, STATUS.OK);
      case COMMANDS.activate.cmd:
        return sub === COMMANDS.activate.sub ? this.activate(frame.data) : this.unknownSub(frame);
      case COMMANDS.getResult.cmd:
        if (sub === COMMANDS.getResult.sub || sub === COMMANDS.getResultWithStatus.sub) {
          const last = this.lastResult;
          return last
            ? this.reply(COMMANDS.getResult.cmd, last.code, last.data)
            : this.reply(frame.cmd, STATUS.FAILED, Uint8Array.of(0x01, 0x00, 0x00, 0x00));
        }
        if (sub === COMMANDS.getConfiguration.sub) return this.getConfiguration();
        return this.unknownSub(frame);
      case COMMANDS.setConfiguration.cmd:
        return sub === COMMANDS.setConfiguration.sub
          ? this.setConfiguration(frame.data)
          : this.unknownSub(frame);
      case COMMANDS.cancel.cmd:
        if (sub !== COMMANDS.cancel.sub) return this.unknownSub(frame);
        if (!this.activating) return this.reply(frame.cmd, STATUS.OK);
        // The transaction is abandoned: its result is never sent. The answer takes a moment, during which the reader
        // refuses everything else.
        this.resetTransaction();
        this.cancelling = true;
        this.later(this.cancelDelayMs, () => {
          this.cancelling = false;
          this.reply(frame.cmd, STATUS.OK);
        });
        return;
      default:
        this.reply(frame.cmd, STATUS.UNKNOWN_COMMAND);
    }
  }

  private unknownSub(frame: RawFrame): void {
    this.reply(frame.cmd, STATUS.UNKNOWN_SUBCOMMAND);
  }

  private getConfiguration(): void {
    const parts: number[] = [];
    for (const [tag, value] of this.configuration) {
      const tagBytes = tag.match(/../g)?.map((h) => Number.parseInt(h, 16)) ?? [];
      parts.push(...tagBytes, value.length, ...value);
    }
    this.reply(COMMANDS.getConfiguration.cmd, STATUS.OK, Uint8Array.from(parts));
  }

  private setConfiguration(data: Uint8Array): void {
    const next = new Map(this.configuration);
    try {
      for (const node of decodeTlv(data)) {
        if (node.value === undefined || node.value.length > 127)
          return this.reply(0x04, STATUS.INCORRECT_PARAMETER);
        next.set(node.tag, node.value);
      }
    } catch (e) {
      if (e instanceof TlvError) return this.reply(0x04, STATUS.MALFORMATTED_DATA);
      throw e;
    }
    // Get configuration answers everything stored in one frame: a configuration that frame cannot carry is refused
    // (0D, buffer overflow) rather than stored and then impossible to answer.
    let size = 0;
    for (const [tag, value] of next) size += tag.length / 2 + 1 + value.length;
    if (size > MAX_DATA_LENGTH) return this.reply(0x04, STATUS.BUFFER_OVERFLOW);
    this.configuration.clear();
    for (const [tag, value] of next) this.configuration.set(tag, value);
    this.reply(0x04, STATUS.OK);
  }

  private fail(code: number, contactless = false): void {
    // Failure data: error code, SW1, SW2, RF state code, TLVs (reader-protocol.md, Activate reply). A tap that failed
    // says so by its RF state (03: during GPO) and the reader's track source DF30 00 (contactless) in FFEE01.
    const data = contactless
      ? Uint8Array.of(code, 0x00, 0x00, 0x03, 0xff, 0xee, 0x01, 0x04, 0xdf, 0x30, 0x01, 0x00)
      : Uint8Array.of(code, 0x00, 0x00, 0x00);
    this.lastResult = { cmd: COMMANDS.activate.cmd, code: STATUS.FAILED, data };
    this.activating = false;
    this.reply(COMMANDS.activate.cmd, STATUS.FAILED, data);
  }

  private activate(data: Uint8Array): void {
    let request: ReturnType<typeof parseActivateData>;
    try {
      request = parseActivateData(data);
    } catch {
      return this.reply(COMMANDS.activate.cmd, STATUS.MALFORMATTED_DATA);
    }
    const tags = new Map(request.tlvs.map((t) => [t.tag, t.value]));
    if (request.timeoutSeconds === 0) return this.reply(COMMANDS.activate.cmd, STATUS.INCORRECT_PARAMETER);
    // The transaction data the card sees (and the read echoes in DE055) must have its EMV format: a reader refuses an
    // amount of the wrong length or not in BCD rather than hand it to the card.
    try {
      for (const tag of ACTIVATE_REQUEST_TAGS) {
        const value = tags.get(tag);
        if (value !== undefined) validateTagValue(tag, value);
      }
    } catch (e) {
      if (e instanceof EmvValueError) return this.reply(COMMANDS.activate.cmd, STATUS.INCORRECT_PARAMETER);
      throw e;
    }
    this.activating = true;
    for (const required of ['9F02', '9C', '5F2A']) if (!tags.has(required)) return this.fail(0x41);
    const amountZero = [...(tags.get('9F02') ?? [])].every((b) => b === 0);
    // Error 03 "amount zero" is what a reader answers unless zero-amount transactions are enabled in its
    // configuration — which a parking reader needs for account verification at a tap-and-go entry.
    if (amountZero && tags.get('9C')?.[0] === 0x00 && !this.acceptZeroAmount) return this.fail(0x03);
    const card = lookup(this.cardName);
    const timeoutMs = request.timeoutSeconds * 1000;
    this.later(timeoutMs, () => {
      this.activating = false;
      this.reply(COMMANDS.activate.cmd, STATUS.TIMEOUT);
    });
    const outcome = this.nextPresentation(card);
    if (outcome.kind === 'no-card' || this.presentDelayMs >= timeoutMs) return;
    this.later(this.presentDelayMs, () => this.present(card, outcome, tags));
  }

  /**
   * What the card does at this Activate: its outcome, or the next step of a `sequence`, which starts over after its
   * last step: a terminal left running with the simulator (`parking-terminal start`, a demonstration, the end-to-end
   * tests) meets each customer's card of that kind from its first step, as a real one would.
   */
  private nextPresentation(card: VirtualCard): VirtualPresentation {
    const outcome = card.outcome;
    if (outcome.kind !== 'sequence') return outcome;
    const step = outcome.steps[this.presentations % outcome.steps.length] ?? outcome.steps[0];
    this.presentations += 1;
    return step;
  }

  private present(card: VirtualCard, outcome: VirtualPresentation, request: Map<string, Uint8Array>): void {
    // The card came: the Activate timeout no longer applies.
    for (const t of this.activeTimers) clearTimeout(t);
    this.activeTimers = [];
    if (card.detected) this.reply(COMMANDS.activate.cmd, STATUS.USER_INTERFACE_EVENT, Uint8Array.of(0x01));
    this.later(card.readMs, () => this.complete(outcome, request));
  }

  private complete(outcome: VirtualPresentation, request: Map<string, Uint8Array>): void {
    switch (outcome.kind) {
      case 'no-card':
        return;
      case 'error':
        return this.fail(outcome.activateErrorCode, outcome.contactless === true);
      case 'unplug':
        return this.unplug();
      case 'read':
      case 'garbage':
      case 'bad-crc': {
        const entryMode = outcome.kind === 'read' ? outcome.entryMode : 'contact';
        const date = localDateTime(this.now(), this.timeZone).slice(2, 8);
        const read = buildVirtualRead(outcome.card, entryMode, { request, date, sequence: this.sequence++ });
        const data = encodeActivateReply({ ...read, track3Field: this.track3Field });
        const status = read.de055Present ? STATUS.REQUEST_ONLINE_AUTHORIZATION : STATUS.OK;
        this.activating = false;
        this.lastResult = { cmd: COMMANDS.activate.cmd, code: status, data };
        if (this.unresponsive) return;
        const frame = encodeReaderFrame({ cmd: COMMANDS.activate.cmd, status, data });
        if (outcome.kind === 'garbage') this.injectGarbage();
        if (outcome.kind === 'bad-crc') frame[frame.length - 1] = (frame[frame.length - 1] as number) ^ 0x5a;
        this.link?.send(frame);
        return;
      }
    }
  }
}
