import { describe, expect, test } from 'bun:test';
import { SourceBackoff } from '../../../src/scanner/sources/backoff.ts';
import { manualClock } from '../../helpers/fake-upstream.ts';

const MIN = 60_000;

describe('SourceBackoff', () => {
  test('starts closed', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 15 * MIN });
    expect(b.isOpen()).toBe(false);
    expect(b.state()).toEqual({ state: 'ok', until: null, reason: null });
  });

  test('opens for 60 s, doubling per consecutive block up to 15 min', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 15 * MIN });
    const periods: number[] = [];
    for (let i = 0; i < 6; i++) {
      const until = b.trip('403');
      periods.push(until - clock.now());
      expect(b.isOpen()).toBe(true);
      clock.set(until); // the period passes; the next request is the probe, and it is blocked again
      expect(b.isOpen()).toBe(false);
    }
    expect(periods).toEqual([MIN, 2 * MIN, 4 * MIN, 8 * MIN, 15 * MIN, 15 * MIN]);
  });

  test('a block in the same burst (already open) does not grow the exponent', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 15 * MIN });
    const first = b.trip('403 a');
    const second = b.trip('403 b');
    expect(second).toBe(first);
    expect(b.consecutiveBlocks).toBe(1);
    expect(b.state().reason).toBe('403 b');
  });

  test('success closes it and resets the exponent', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 15 * MIN });
    clock.set(b.trip('x'));
    clock.set(b.trip('x'));
    b.succeed();
    expect(b.state().state).toBe('ok');
    expect(b.trip('x') - clock.now()).toBe(MIN);
  });

  test('Retry-After replaces the exponential period, capped at maxMs and floored at 1 s', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 10 * MIN });
    expect(b.trip('429', 120_000) - clock.now()).toBe(120_000);
    clock.advance(120_000);
    expect(b.trip('429', 3_600_000) - clock.now()).toBe(10 * MIN);
    clock.advance(10 * MIN);
    expect(b.trip('429', 0) - clock.now()).toBe(1000);
  });

  test('state reports backing_off with until and reason while open', () => {
    const clock = manualClock();
    const b = new SourceBackoff({ now: clock.now, baseMs: MIN, maxMs: 15 * MIN });
    const until = b.trip('Waze answered 403');
    expect(b.state()).toEqual({ state: 'backing_off', until, reason: 'Waze answered 403' });
    clock.set(until);
    expect(b.state()).toEqual({ state: 'ok', until: null, reason: null });
  });
});
