import { describe, expect, it } from 'vitest';
import { parseSession } from '../session.js';
import { captureFile, caseFileNames } from './evidence.js';
import { sampleRunReport } from './sample-run.js';

describe('caseFileNames', () => {
  it('uses a case id made of letters, digits, dot, dash and underscore as it is', () => {
    expect(caseFileNames([{ id: 'PK-MTR-N2-CL-01' }, { id: 'pk_2.b' }])).toEqual([
      'PK-MTR-N2-CL-01',
      'pk_2.b',
    ]);
  });

  it('gives any other id a name of its position and hash that stays inside cases/', () => {
    const hostile = [
      '../../etc/passwd',
      'a/b',
      'a\\b',
      '',
      '.',
      '..',
      '.hidden',
      'x'.repeat(101),
      'é',
      'a b',
    ];
    const names = caseFileNames(hostile.map((id) => ({ id })));
    names.forEach((name, i) => {
      expect(name).toMatch(/^case-\d{3}-[0-9a-f]{8}$/);
      expect(name.startsWith(`case-${String(i + 1).padStart(3, '0')}-`)).toBe(true);
    });
    expect(new Set(names).size).toBe(names.length);
  });

  it('never gives two cases the same file, even on a case-insensitive file system', () => {
    const names = caseFileNames([{ id: 'PK-1' }, { id: 'PK-1' }, { id: 'pk-1' }]);
    expect(names[0]).toBe('PK-1');
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(3);
  });
});

describe('captureFile', () => {
  it('writes the format certify check reads, with each message in order and no answer where none came', () => {
    const failed = sampleRunReport().cases[1]!;
    const capture = captureFile(failed);
    expect(capture.format).toBe('parking-terminal-capture/1');
    expect(capture.case).toBe('PK-KSK-N1-CT-02');
    expect(capture.messages.map((m) => Object.keys(m))).toEqual([
      ['method', 'path', 'body', 'response', 'httpStatus', 'at'],
      ['method', 'path', 'body', 'httpStatus', 'at'],
    ]);
    const session = parseSession(JSON.parse(JSON.stringify(capture)));
    expect(session).toHaveLength(2);
    expect(session[1]).toMatchObject({ method: 'POST', httpStatus: null, at: failed.messages[1]!.at });
    expect(session[1]!.response).toBeUndefined();
  });
});
