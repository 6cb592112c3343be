import { describe, expect, test } from 'bun:test';
import { decodeCursor, encodeCursor } from '../../src/read-model/query.ts';

describe('cursors', () => {
  test('round-trip: 24-hour view cursors and history cursors carrying their range', () => {
    const view = { reportedAt: 1_763_719_200_000, id: 'evt_5k2j9xq4m7c1b8d0a3f6' };
    expect(decodeCursor(encodeCursor(view))).toEqual(view);
    const history = { ...view, range: { from: 1_763_632_800_000, to: 1_763_719_260_000 } };
    expect(decodeCursor(encodeCursor(history))).toEqual(history);
    // Ids may contain dots: the numbers before them are parsed strictly.
    const dotted = { reportedAt: 5, id: 'a.b.c', range: { from: 1, to: 2 } };
    expect(decodeCursor(encodeCursor(dotted))).toEqual(dotted);
  });

  test('anything else is not a cursor', () => {
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
    for (const bad of ['', 'not a cursor!', b64('1.x.evt'), b64('2.1.2.evt'), b64('2.1.3.2.evt'), b64('3.1.evt'), b64('1.1.'), b64(`1.1.${'x'.repeat(201)}`)]) {
      expect(decodeCursor(bad)).toBeNull();
    }
  });
});
