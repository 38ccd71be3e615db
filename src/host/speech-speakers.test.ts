import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_LOCALES, translator } from '../i18n/index.js';
import {
  createSpeaker,
  espeakArguments,
  ESPEAK_VOICES,
  EspeakSpeaker,
  SpeechError,
  type Utterance,
} from './speech-speakers.js';

/** espeak-ng is part of the test machine (`.ci/run` installs it). */
const dir = mkdtempSync(join(tmpdir(), 'pt-speech-'));

function utterance(locale: string, text = translator(locale).t('screen.presentCard.title')): Utterance {
  return { text, locale, volume: 0.6, rate: 1 };
}

/** True while a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the espeak-ng speaker', () => {
  it.each([['en_GB'], ['de_DE'], ['ar_AE']])('speaks %s into a WAV file', async (locale) => {
    const wavFile = join(dir, `${locale}.wav`);
    const speaker = new EspeakSpeaker({ wavFile });
    expect(await speaker.speak(utterance(locale))).toBe('done');
    const wav = readFileSync(wavFile);
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('ascii')).toBe('WAVE');
    // More than the 44-byte header: there is sound in it.
    expect(wav.length).toBeGreaterThan(10_000);
    expect(speaker.error).toBeUndefined();
  });

  it('has a voice for every language of the customer screens', () => {
    for (const locale of SUPPORTED_LOCALES) expect(ESPEAK_VOICES[locale]).toMatch(/^[a-z]{2}(-[a-z]{2})?$/);
    expect(espeakArguments(utterance('de_DE'))).toEqual(['-v', 'de', '-a', '120', '-s', '175', '--stdin']);
    expect(espeakArguments({ ...utterance('ar-AE'), volume: 1, rate: 1.2 }, '/tmp/x.wav')).toEqual([
      '-v',
      'ar',
      '-a',
      '200',
      '-s',
      '210',
      '-w',
      '/tmp/x.wav',
      '--stdin',
    ]);
  });

  it('never takes the text as an argument: a text that looks like an option is spoken', async () => {
    const wavFile = join(dir, 'option.wav');
    const speaker = new EspeakSpeaker({ wavFile });
    expect(await speaker.speak(utterance('en_GB', '--version -w /tmp/elsewhere.wav'))).toBe('done');
    expect(statSync(wavFile).size).toBeGreaterThan(10_000);
  });

  it('interrupts the utterance being said: the next one kills its process', async () => {
    const speaker = new EspeakSpeaker({ wavFile: join(dir, 'long.wav') });
    const long = Array.from({ length: 2_000 }, () => 'Parking fee for ninety five minutes.').join(' ');
    const first = speaker.speak(utterance('en_GB', long));
    const pid = speaker.process?.pid;
    expect(pid).toBeDefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(pid!)).toBe(true);
    const second = speaker.speak(utterance('en_GB'));
    expect(await first).toBe('interrupted');
    expect(alive(pid!)).toBe(false);
    expect(await second).toBe('done');
  });

  it("says an utterance's runs in turn, each with its own language's voice", async () => {
    // A stand-in for espeak-ng that notes the voice it was given and the text it read.
    const program = join(dir, 'voice-log.sh');
    const log = join(dir, 'voice-log.txt');
    writeFileSync(program, `#!/bin/sh\nprintf '%s|%s\\n' "$2" "$(cat)" >> '${log}'\n`);
    chmodSync(program, 0o755);
    const speaker = new EspeakSpeaker({ program });
    const said = await speaker.speak({
      ...utterance('ar_AE', 'الإيصال. City Car Park. Amount: £6.00.'),
      runs: [
        { text: 'الإيصال.', locale: 'ar_AE' },
        { text: 'City Car Park. Amount: £6.00.', locale: 'en_GB' },
      ],
    });
    expect(said).toBe('done');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      'ar|الإيصال.',
      'en-gb|City Car Park. Amount: £6.00.',
    ]);
  });

  it('stops at once', async () => {
    const speaker = new EspeakSpeaker({ wavFile: join(dir, 'stop.wav') });
    const long = Array.from({ length: 2_000 }, () => 'Present your card.').join(' ');
    const said = speaker.speak(utterance('en_GB', long));
    await new Promise((r) => setTimeout(r, 100));
    speaker.stop();
    expect(await said).toBe('interrupted');
    expect(speaker.process).toBeUndefined();
  });

  it('reports a missing program once, as a typed error, and stays silent without crashing', async () => {
    const reported: SpeechError[] = [];
    const speaker = new EspeakSpeaker({
      program: join(dir, 'no-espeak-here'),
      onError: (e) => reported.push(e),
    });
    expect(await speaker.speak(utterance('en_GB'))).toBe('failed');
    expect(await speaker.speak(utterance('de_DE'))).toBe('failed');
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(SpeechError);
    expect(reported[0]?.code).toBe('SPEECH_ENGINE_MISSING');
    expect(speaker.error?.code).toBe('SPEECH_ENGINE_MISSING');
  });

  it('reports a failing engine (an unknown voice, no audio device) as SPEECH_ENGINE_FAILED', async () => {
    const reported: SpeechError[] = [];
    // `false` runs and exits 1, as espeak-ng does without an audio device.
    const speaker = new EspeakSpeaker({ program: 'false', onError: (e) => reported.push(e) });
    expect(await speaker.speak(utterance('en_GB'))).toBe('failed');
    expect(await speaker.speak(utterance('en_GB'))).toBe('failed');
    expect(reported.map((e) => e.code)).toEqual(['SPEECH_ENGINE_FAILED']);
  });
});

describe('createSpeaker', () => {
  it('builds the speaker of the configured engine', () => {
    const base = { volume: 0.6, rate: 1, espeakPath: 'espeak-ng' };
    expect(createSpeaker({ ...base, engine: 'platform' }).by).toBe('renderer');
    expect(createSpeaker({ ...base, engine: 'espeak-ng' }).by).toBe('terminal');
    expect(createSpeaker({ ...base, engine: 'none' }).by).toBeUndefined();
  });
});
