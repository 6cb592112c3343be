import { expect, test } from 'bun:test';
import { istanbulMonth, monthOf } from '../../src/limits/istanbul-month.ts';

test('November 2026 in Istanbul (UTC+3)', () => {
  const p = istanbulMonth(Date.parse('2026-11-21T10:00:00Z'));
  expect(p).toEqual({ key: '2026-11', start: Date.parse('2026-10-31T21:00:00Z'), end: Date.parse('2026-11-30T21:00:00Z') });
});

test('2026-11-30T21:00:00Z is already December in Istanbul', () => {
  expect(istanbulMonth(Date.parse('2026-11-30T20:59:59.999Z')).key).toBe('2026-11');
  const dec = istanbulMonth(Date.parse('2026-11-30T21:00:00Z'));
  expect(dec.key).toBe('2026-12');
  expect(dec.start).toBe(Date.parse('2026-11-30T21:00:00Z'));
  expect(dec.end).toBe(Date.parse('2026-12-31T21:00:00Z'));
});

test('year turn', () => {
  const p = istanbulMonth(Date.parse('2026-12-31T21:00:00Z'));
  expect(p).toEqual({ key: '2027-01', start: Date.parse('2026-12-31T21:00:00Z'), end: Date.parse('2027-01-31T21:00:00Z') });
});

test('a zone with DST gets the month start right on both sides of a change', () => {
  // Europe/Berlin: UTC+1 in March until the last Sunday, UTC+2 in April.
  const april = monthOf(Date.parse('2026-04-15T12:00:00Z'), 'Europe/Berlin');
  expect(april.start).toBe(Date.parse('2026-03-31T22:00:00Z'));
  expect(april.end).toBe(Date.parse('2026-04-30T22:00:00Z'));
  const march = monthOf(Date.parse('2026-03-15T12:00:00Z'), 'Europe/Berlin');
  expect(march.start).toBe(Date.parse('2026-02-28T23:00:00Z'));
  expect(march.end).toBe(april.start);
});
