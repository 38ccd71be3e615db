/**
 * The terminal's voices behind one interface (EN 301 549 5.1.3): `platform` — the customer's screen speaks through
 * the platform's speech synthesis (the Web Speech API of Electron or Chromium; the view carries the text,
 * src/host/speech-output.ts), `espeak-ng` — the terminal speaks itself through espeak-ng (Linux kiosks), `none`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../config/index.js';
import { resolveLocale, type SupportedLocale } from '../i18n/index.js';

export type SpeechEngine = Config['customer']['speech']['engine'];

/** One thing to say. */
export interface Utterance {
  readonly text: string;
  /** The customer's language (`de_DE`): the voice. */
  readonly locale: string;
  /**
   * `text` as runs by language, in order, each said with its own language's voice (a receipt issued in the terminal's
   * language on an ar_AE screen); absent: all of `text` in `locale`.
   */
  readonly runs?: readonly { readonly text: string; readonly locale: string }[];
  /** 0–1. */
  readonly volume: number;
  /** 1 is normal (0.5–2). */
  readonly rate: number;
}

/** How an utterance ended: said to the end, cut off by the next one or by stop(), or not said at all. */
export type SpeechEnd = 'done' | 'interrupted' | 'failed';

export type SpeechErrorCode =
  /** The espeak-ng program is not installed (or not at the configured path). */
  | 'SPEECH_ENGINE_MISSING'
  /** The engine ran and failed (no audio device, an unknown voice …). */
  | 'SPEECH_ENGINE_FAILED';

export class SpeechError extends Error {
  override readonly name: string = 'SpeechError';
  constructor(
    readonly code: SpeechErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A voice. Contract: one utterance at a time — `speak` interrupts what is being said; neither `speak` nor `stop`
 * throws, and a speaker that cannot speak says so through `error` (and its `onError`, once per kind of failure):
 * speech output is an aid, never a reason for the terminal to stop.
 */
export interface Speaker {
  readonly engine: SpeechEngine;
  /**
   * Who speaks what the view carries: the `renderer` (platform) or the `terminal` itself; undefined: nobody (none).
   */
  readonly by: 'renderer' | 'terminal' | undefined;
  /** Says `utterance`, cutting off the one before. Resolves when it ends; never rejects. */
  speak(utterance: Utterance): Promise<SpeechEnd>;
  /** Stops talking at once (the stop key, the end of a session). */
  stop(): void;
  /** What keeps this speaker from speaking, once something did. */
  readonly error: SpeechError | undefined;
}

/** The renderer speaks (Web Speech API); the terminal itself says nothing. */
export class PlatformSpeaker implements Speaker {
  readonly engine = 'platform' as const;
  readonly by = 'renderer' as const;
  readonly error = undefined;
  speak(): Promise<SpeechEnd> {
    return Promise.resolve('done');
  }
  stop(): void {}
}

/** No speech output. */
export class SilentSpeaker implements Speaker {
  readonly engine = 'none' as const;
  readonly by = undefined;
  readonly error = undefined;
  speak(): Promise<SpeechEnd> {
    return Promise.resolve('failed');
  }
  stop(): void {}
}

/** The espeak-ng voice of each language the customer screens speak. */
export const ESPEAK_VOICES: Readonly<Record<SupportedLocale, string>> = {
  en_GB: 'en-gb',
  en_US: 'en-us',
  de_DE: 'de',
  fr_FR: 'fr-fr',
  es_ES: 'es',
  it_IT: 'it',
  nl_NL: 'nl',
  pl_PL: 'pl',
  ar_AE: 'ar',
};

/** espeak-ng's words per minute at rate 1 (its own default). */
const ESPEAK_WPM = 175;

export interface EspeakOptions {
  /** The program: a name on PATH or a path (`customer.speech.espeakPath`). */
  program?: string;
  /** Writes each utterance to this WAV file (`espeak-ng -w`) instead of the audio device (tests, diagnostics). */
  wavFile?: string;
  /** Told once per kind of failure (the host logs it and shows it in the operator status). */
  onError?: (error: SpeechError) => void;
}

/** The arguments of one utterance: voice, amplitude (0–200; 100 is espeak-ng's default, at volume 0.5), speed. */
export function espeakArguments(utterance: Utterance, wavFile?: string): string[] {
  const amplitude = Math.round(Math.min(1, Math.max(0, utterance.volume)) * 200);
  const speed = Math.round(ESPEAK_WPM * Math.min(2, Math.max(0.5, utterance.rate)));
  return [
    '-v',
    ESPEAK_VOICES[resolveLocale(utterance.locale)],
    '-a',
    String(amplitude),
    '-s',
    String(speed),
    ...(wavFile !== undefined ? ['-w', wavFile] : []),
    // The text goes through stdin: never an argument, so that nothing in it can read as an option.
    '--stdin',
  ];
}

/**
 * The terminal speaks through espeak-ng: one process per utterance, killed when the next one starts or stop() is
 * called. A missing program is an error reported once; the speaker then stays silent (until a restart).
 */
export class EspeakSpeaker implements Speaker {
  readonly engine = 'espeak-ng' as const;
  readonly by = 'terminal' as const;
  private current: ChildProcess | undefined;
  private failure: SpeechError | undefined;
  private readonly reported = new Set<SpeechErrorCode>();
  private readonly program: string;
  /** Counts utterances and stops: the runs of an utterance ended by either are not said. */
  private turn = 0;

  constructor(private readonly options: EspeakOptions = {}) {
    this.program = options.program ?? 'espeak-ng';
  }

  get error(): SpeechError | undefined {
    return this.failure;
  }

  /** The process saying the current utterance (tests). */
  get process(): ChildProcess | undefined {
    return this.current;
  }

  /**
   * Says `utterance`: its runs one after another, one process each with its language's voice (the next starts when
   * one has said all of its text), or its text as one run. A new utterance or stop() ends them all.
   */
  async speak(utterance: Utterance): Promise<SpeechEnd> {
    this.stop();
    const turn = ++this.turn;
    const runs = utterance.runs ?? [{ text: utterance.text, locale: utterance.locale }];
    let how: SpeechEnd = 'done';
    for (const run of runs) {
      if (turn !== this.turn) return 'interrupted';
      how = await this.speakRun({ ...utterance, text: run.text, locale: run.locale });
      if (how !== 'done') return how;
    }
    return how;
  }

  private speakRun(utterance: Utterance): Promise<SpeechEnd> {
    if (this.failure?.code === 'SPEECH_ENGINE_MISSING') return Promise.resolve('failed');
    const child = spawn(this.program, espeakArguments(utterance, this.options.wavFile), {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    this.current = child;
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 2_000) stderr += chunk;
    });
    // A process that died before reading its text: its exit says why, not the broken pipe.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(utterance.text);
    return new Promise<SpeechEnd>((resolve) => {
      let settled = false;
      const end = (how: SpeechEnd): void => {
        if (settled) return;
        settled = true;
        if (this.current === child) this.current = undefined;
        resolve(how);
      };
      child.on('error', (err: NodeJS.ErrnoException) => {
        this.fail(
          err.code === 'ENOENT'
            ? new SpeechError('SPEECH_ENGINE_MISSING', `${this.program} is not installed`, { cause: err })
            : new SpeechError('SPEECH_ENGINE_FAILED', `${this.program} could not start: ${err.message}`, {
                cause: err,
              }),
        );
        end('failed');
      });
      child.on('close', (code, signal) => {
        // After a failed start ('error'), Node may still report a close: the start's error is the one that counts.
        if (settled) return;
        if (signal !== null || child.killed) return end('interrupted');
        if (code === 0) {
          this.failure = undefined;
          return end('done');
        }
        const reason = stderr.trim().split('\n').pop() ?? '';
        this.fail(new SpeechError('SPEECH_ENGINE_FAILED', `${this.program} exited with ${code}: ${reason}`));
        end('failed');
      });
    });
  }

  stop(): void {
    this.turn += 1;
    const child = this.current;
    this.current = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private fail(error: SpeechError): void {
    this.failure = error;
    if (this.reported.has(error.code)) return;
    this.reported.add(error.code);
    this.options.onError?.(error);
  }
}

/** The speaker of `customer.speech.engine`. */
export function createSpeaker(
  settings: Config['customer']['speech'],
  onError?: (error: SpeechError) => void,
): Speaker {
  switch (settings.engine) {
    case 'platform':
      return new PlatformSpeaker();
    case 'espeak-ng':
      return new EspeakSpeaker({ program: settings.espeakPath, ...(onError ? { onError } : {}) });
    case 'none':
      return new SilentSpeaker();
  }
}
