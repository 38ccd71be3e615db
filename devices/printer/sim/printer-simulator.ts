import CodepageEncoder from '@point-of-sale/codepage-encoder';
import QRCode from 'qrcode';
import { ESC_T_CODEPAGES } from '../escpos.js';
import { statusAnswers } from '../status.js';

/**
 * A simulated ESC/POS thermal printer. It decodes the bytes it receives the way a printer executes them — text
 * through the selected code table, line feeds, the commands the encoder sends (ESC @, ESC t, ESC E, GS V, GS ( k …)
 * — into printed lines, so that a test can read back what a customer would hold. It answers real-time status requests
 * (DLE EOT n) at once, also while it cannot print, and can be told to run out of paper, open its cover, stop answering
 * or be unplugged. Bytes it does not understand are recorded as protocol errors (a real printer would print garbage).
 * A QR code wider than the roll's printable width is not printed, as an Epson printer does not print a symbol that
 * exceeds its print area.
 */

/** One receipt as it came out of the printer: the text lines up to a cut, trailing blank feed lines removed. */
export interface PrintedReceipt {
  readonly lines: readonly string[];
  /** Payloads of the QR codes printed on it, in order. */
  readonly qrCodes: readonly string[];
}

/** What a test or the demo can do to the simulated printer. */
export interface SimulatedPrinterControl {
  setPaper(paper: 'ok' | 'near-end' | 'out'): void;
  setCover(cover: 'open' | 'closed'): void;
  /** The paper runs out after this many more printed lines (the rest of the job stays in the buffer). */
  runOutOfPaperAfter(lines: number): void;
  /** A silent printer answers nothing (powered off, wrong baud rate): the driver reports `offline`. */
  setSilent(silent: boolean): void;
  /** Pulls the cable: the open connection ends. */
  unplug(): void;
  /**
   * Switched off and on again with its serial cable in place: the connection stays open, and what it had received and
   * not printed (a job held back by a paper end, say) is lost, as a real printer's receive buffer is.
   */
  powerCycle(): void;
  /** Every receipt cut so far, oldest first. */
  readonly receipts: readonly PrintedReceipt[];
  /** Lines printed since the last cut (a job cut short by paper end stays here). */
  readonly pendingLines: readonly string[];
  /** Descriptions of bytes that are not ESC/POS the simulator knows; empty when everything decoded. */
  readonly protocolErrors: readonly string[];
  /** Resolves with the next receipt to be cut. */
  nextReceipt(): Promise<PrintedReceipt>;
}

/** The host side of one connection. */
export interface PrinterLink {
  /** Bytes from the printer to the host (status answers). */
  send(bytes: Uint8Array): void;
  /** The printer went away (unplugged). */
  unplugged(): void;
}

/** Returned by {@link PrinterSimulator.attach}. */
export interface PrinterEndpoint {
  /** Bytes from the host to the printer. */
  deliver(bytes: Uint8Array): void;
  detach(): void;
}

const ESC = 0x1b;
const GS = 0x1d;
const FS = 0x1c;
const DLE = 0x10;
const EOT = 0x04;
const LF = 0x0a;
const CR = 0x0d;

/** Why a command cannot be decoded yet: more bytes are needed. */
const NEED_MORE = -1;

const tables = new Map<number, readonly number[]>();
function codepoints(escT: number): readonly number[] | undefined {
  const name = ESC_T_CODEPAGES[escT];
  if (name === undefined) return undefined;
  let t = tables.get(escT);
  if (!t) {
    t = CodepageEncoder.getCodepoints(name, true);
    tables.set(escT, t);
  }
  return t;
}

/** Options of a simulated printer. */
export interface PrinterSimulatorOptions {
  /** Dots across the printable width (8 per mm at 203 dpi): 504 for a 42-column roll (the default), 576 for 48. */
  readonly printableDots?: number;
}

/** GS ( k fn 69 argument → error correction level (Epson: 48 L, 49 M, 50 Q, 51 H). */
const QR_LEVELS: Readonly<Record<number, 'L' | 'M' | 'Q' | 'H'>> = { 48: 'L', 49: 'M', 50: 'Q', 51: 'H' };

export class PrinterSimulator implements SimulatedPrinterControl {
  private readonly printableDots: number;
  /** GS ( k fn 67 (dots per module, Epson's default 3) and fn 69 (error correction, default L). */
  private qrModuleDots = 3;
  private qrLevel: 'L' | 'M' | 'Q' | 'H' = 'L';
  private paper: 'ok' | 'near-end' | 'out' = 'ok';
  private coverOpen = false;
  private silent = false;
  private linesUntilPaperOut: number | undefined;
  private link: PrinterLink | undefined;
  /** Bytes received and not executed yet: an incomplete command, or everything while the printer cannot print. */
  private buffer: number[] = [];
  private table = 0;
  private line = '';
  private printedLines: string[] = [];
  private qrCodes: string[] = [];
  private pendingQrData: string | undefined;
  private readonly done: PrintedReceipt[] = [];
  private readonly errors: string[] = [];
  private waiters: Array<(r: PrintedReceipt) => void> = [];

  constructor(options: PrinterSimulatorOptions = {}) {
    this.printableDots = options.printableDots ?? 504;
  }

  get receipts(): readonly PrintedReceipt[] {
    return this.done;
  }
  get pendingLines(): readonly string[] {
    return this.printedLines;
  }
  get protocolErrors(): readonly string[] {
    return this.errors;
  }

  /** Connects a host. One host at a time, like a serial port: a second attach throws. */
  attach(link: PrinterLink): PrinterEndpoint {
    if (this.link) throw new Error('the simulated printer is already connected');
    this.link = link;
    return {
      deliver: (bytes) => {
        if (this.link === link) this.receive(bytes);
      },
      detach: () => {
        if (this.link === link) this.link = undefined;
      },
    };
  }

  setPaper(paper: 'ok' | 'near-end' | 'out'): void {
    this.paper = paper;
    if (paper !== 'out') this.linesUntilPaperOut = undefined;
    this.run();
  }

  setCover(cover: 'open' | 'closed'): void {
    this.coverOpen = cover === 'open';
    this.run();
  }

  runOutOfPaperAfter(lines: number): void {
    this.linesUntilPaperOut = lines;
  }

  setSilent(silent: boolean): void {
    this.silent = silent;
  }

  unplug(): void {
    const link = this.link;
    this.link = undefined;
    link?.unplugged();
  }

  powerCycle(): void {
    this.buffer = [];
    this.line = '';
    this.printedLines = [];
    this.qrCodes = [];
    this.pendingQrData = undefined;
    this.table = 0;
    this.qrModuleDots = 3;
    this.qrLevel = 'L';
    this.linesUntilPaperOut = undefined;
  }

  nextReceipt(): Promise<PrintedReceipt> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private canPrint(): boolean {
    return !this.coverOpen && this.paper !== 'out';
  }

  private receive(bytes: Uint8Array): void {
    for (const b of bytes) this.buffer.push(b);
    this.run();
  }

  /**
   * Executes buffered bytes. While the printer cannot print, only real-time status requests are answered (a real
   * printer executes them as they arrive, whatever its state) and everything else waits in the buffer.
   */
  private run(): void {
    if (!this.canPrint()) {
      this.answerRealTimeRequests();
      return;
    }
    while (this.buffer.length > 0 && this.canPrint()) {
      const used = this.execute(this.buffer, 0);
      if (used === NEED_MORE) return;
      this.buffer.splice(0, used);
    }
    if (!this.canPrint()) this.answerRealTimeRequests();
  }

  private answerRealTimeRequests(): void {
    for (let i = 0; i + 2 < this.buffer.length; i++) {
      if (this.buffer[i] === DLE && this.buffer[i + 1] === EOT) {
        this.answerStatus(this.buffer[i + 2] ?? 0);
        this.buffer.splice(i, 3);
        i--;
      }
    }
  }

  private answerStatus(n: number): void {
    if (this.silent) return;
    const a = statusAnswers({ coverOpen: this.coverOpen, paper: this.paper });
    const byte =
      n === 1 ? a.printer : n === 2 ? a.offlineCause : n === 4 ? a.paperSensor : n === 3 ? 0x12 : undefined;
    if (byte === undefined) {
      this.errors.push(`DLE EOT ${n}: no such status request`);
      return;
    }
    this.link?.send(Uint8Array.of(byte));
  }

  private endLine(): void {
    this.printedLines.push(this.line);
    this.line = '';
    if (this.linesUntilPaperOut !== undefined) {
      this.linesUntilPaperOut--;
      if (this.linesUntilPaperOut <= 0) {
        this.linesUntilPaperOut = undefined;
        this.paper = 'out';
      }
    }
  }

  private cut(): void {
    if (this.line !== '') this.endLine();
    const lines = [...this.printedLines];
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    const receipt: PrintedReceipt = { lines, qrCodes: this.qrCodes };
    this.printedLines = [];
    this.qrCodes = [];
    this.done.push(receipt);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(receipt);
  }

  private text(b: number): void {
    if (b < 0x80) {
      this.line += String.fromCharCode(b);
      return;
    }
    const t = codepoints(this.table);
    const cp = t?.[b];
    if (cp === undefined) this.errors.push(`byte ${b.toString(16)} in unknown code table ${this.table}`);
    else this.line += String.fromCodePoint(cp);
  }

  /**
   * Executes the command at `at`; returns the number of bytes it used, or NEED_MORE when it is incomplete. The
   * argument lengths are those of the Epson ESC/POS command reference.
   */
  private execute(buf: readonly number[], at: number): number {
    const b = buf[at] ?? 0;
    const arg = (i: number): number | undefined => buf[at + i];
    const need = (n: number): boolean => buf.length - at < n;
    if (b >= 0x20 && b !== 0x7f) {
      this.text(b);
      return 1;
    }
    switch (b) {
      case LF:
        this.endLine();
        return 1;
      case CR:
        return 1;
      case 0x09:
        this.line += ' ';
        return 1;
      case DLE: {
        if (need(3)) return NEED_MORE;
        if (arg(1) === EOT) {
          this.answerStatus(arg(2) ?? 0);
          return 3;
        }
        this.errors.push(`DLE ${String(arg(1))}: unsupported real-time command`);
        return 2;
      }
      case ESC:
        return this.executeEsc(buf, at);
      case GS:
        return this.executeGs(buf, at);
      case FS: {
        if (need(2)) return NEED_MORE;
        const c = arg(1);
        if (c === 0x2e || c === 0x26) return 2; // FS . / FS &: Kanji mode off / on (no effect on single-byte text)
        this.errors.push(`FS ${String(c)}: unsupported`);
        return 2;
      }
      default:
        this.errors.push(`control byte ${b.toString(16)}`);
        return 1;
    }
  }

  private executeEsc(buf: readonly number[], at: number): number {
    if (buf.length - at < 2) return NEED_MORE;
    const c = buf[at + 1] ?? 0;
    const withArgs = (n: number): number => (buf.length - at < 2 + n ? NEED_MORE : 2 + n);
    switch (String.fromCharCode(c)) {
      case '@': // initialise
        this.table = 0;
        return 2;
      case '2': // default line spacing
        return 2;
      case 't': {
        const used = withArgs(1);
        if (used === NEED_MORE) return used;
        const n = buf[at + 2] ?? 0;
        if (codepoints(n) === undefined)
          this.errors.push(`ESC t ${n}: code table the simulator does not know`);
        this.table = n;
        return used;
      }
      case 'd': {
        const used = withArgs(1);
        if (used === NEED_MORE) return used;
        const n = buf[at + 2] ?? 0;
        for (let i = 0; i < n; i++) this.endLine();
        return used;
      }
      case 'E': // bold
      case 'G': // double strike
      case '-': // underline
      case '4': // italic (some models)
      case 'M': // font
      case 'a': // justification
      case '!': // print mode
      case '3': // line spacing
      case 'R': // international character set
      case ' ': // character spacing
      case 'V': // 90° rotation
      case '{': // upside down
      case 'J': // feed dots
        return withArgs(1);
      case 'p': // drawer pulse
        return withArgs(3);
      case '*': {
        // bit image, column mode: m nL nH then nL + 256 nH columns of 1 (m 0, 1) or 3 (m 32, 33) bytes
        if (buf.length - at < 5) return NEED_MORE;
        const m = buf[at + 2] ?? 0;
        const columns = (buf[at + 3] ?? 0) + 256 * (buf[at + 4] ?? 0);
        return withArgs(3 + columns * (m >= 32 ? 3 : 1));
      }
      default:
        this.errors.push(`ESC ${String.fromCharCode(c)}: unsupported`);
        return 2;
    }
  }

  private executeGs(buf: readonly number[], at: number): number {
    if (buf.length - at < 2) return NEED_MORE;
    const c = buf[at + 1] ?? 0;
    const withArgs = (n: number): number => (buf.length - at < 2 + n ? NEED_MORE : 2 + n);
    switch (String.fromCharCode(c)) {
      case 'V': {
        // cut: m 0, 1, 48, 49 alone; m 65, 66, 97, 98, 103, 104 with a feed amount
        if (buf.length - at < 3) return NEED_MORE;
        const m = buf[at + 2] ?? 0;
        const used = [0, 1, 48, 49].includes(m) ? 3 : withArgs(2);
        if (used === NEED_MORE) return used;
        this.cut();
        return used;
      }
      case 'r': {
        // GS r 1: transmit the paper sensor status. Not real-time: answered when the printer reaches it, that is
        // once everything before it is printed — which is how the driver learns that a job came out whole.
        const used = withArgs(1);
        if (used === NEED_MORE) return used;
        if (!this.silent)
          this.link?.send(
            Uint8Array.of(this.paper === 'near-end' ? 0x03 : this.paper === 'out' ? 0x0c : 0x00),
          );
        return used;
      }
      case '!': // character size
      case 'B': // reverse
      case 'h': // barcode height
      case 'w': // barcode width
      case 'H': // barcode text position
      case 'f': // barcode font
        return withArgs(1);
      case 'L': // left margin
      case 'W': // print area width
        return withArgs(2);
      case '(': {
        // GS ( fn pL pH data: here GS ( k, the 2D codes
        if (buf.length - at < 5) return NEED_MORE;
        const length = (buf[at + 3] ?? 0) + 256 * (buf[at + 4] ?? 0);
        const used = withArgs(3 + length);
        if (used === NEED_MORE) return used;
        if (buf[at + 2] === 0x6b) this.twoDimensionalCode(buf.slice(at + 5, at + 5 + length));
        return used;
      }
      case 'v': {
        // GS v 0 m xL xH yL yH: a raster image of (xL + 256 xH) × (yL + 256 yH) bytes
        if (buf.length - at < 8) return NEED_MORE;
        const x = (buf[at + 4] ?? 0) + 256 * (buf[at + 5] ?? 0);
        const y = (buf[at + 6] ?? 0) + 256 * (buf[at + 7] ?? 0);
        return withArgs(6 + x * y);
      }
      default:
        this.errors.push(`GS ${String.fromCharCode(c)}: unsupported`);
        return 2;
    }
  }

  /**
   * GS ( k: cn 49 is a QR code; fn 67 sets its dots per module, fn 69 its error correction, fn 80 stores its data,
   * fn 81 prints what was stored — unless the symbol is wider than the printable width.
   */
  private twoDimensionalCode(params: readonly number[]): void {
    const [cn, fn, n] = params;
    if (cn !== 49) return;
    if (fn === 67 && n !== undefined && n >= 1 && n <= 16) this.qrModuleDots = n;
    else if (fn === 69 && n !== undefined && QR_LEVELS[n] !== undefined) this.qrLevel = QR_LEVELS[n];
    else if (fn === 80) this.pendingQrData = Buffer.from(params.slice(3)).toString('latin1');
    else if (fn === 81 && this.pendingQrData !== undefined) {
      const data = this.pendingQrData;
      this.pendingQrData = undefined;
      if (this.line !== '') this.endLine();
      if (this.qrWidthDots(data) > this.printableDots) return;
      this.qrCodes.push(Buffer.from(data, 'latin1').toString('utf8'));
    }
  }

  /** Dots across the symbol of `data` (its bytes, in byte mode) at the set module size and error correction. */
  private qrWidthDots(data: string): number {
    try {
      const modules = QRCode.create([{ data: Buffer.from(data, 'latin1'), mode: 'byte' }], {
        errorCorrectionLevel: this.qrLevel,
      }).modules.size;
      return modules * this.qrModuleDots;
    } catch {
      return Number.POSITIVE_INFINITY; // more data than any symbol holds
    }
  }
}
