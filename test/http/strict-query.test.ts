import { describe, expect, test } from 'bun:test';
import { t } from 'elysia';
import { strictQuery } from '../../src/http/strict-query.ts';
import { ApiError } from '../../src/http/problems.ts';
import { thrown } from '../helpers/thrown.ts';

// strictQuery is the one parser of query strings; the HTTP tests (params.test.ts) cover the
// routes' own schemas. These cover what no route uses today.

const problem = (fn: () => unknown): ApiError => thrown(ApiError, fn);

describe('strictQuery', () => {
  test('a kind it cannot check and convert is refused when the route is built, not served as a string', () => {
    expect(() => strictQuery(t.Object({ flag: t.Optional(t.Boolean()) }))).toThrow("query parameter 'flag' has a type it cannot check");
    expect(() => strictQuery(t.Object({ ids: t.Optional(t.Array(t.String())) }))).toThrow("'ids'");
  });

  test('required parameters are enforced, also on an empty query string', () => {
    const parse = strictQuery(t.Object({ q: t.String({ minLength: 1 }), n: t.Optional(t.Integer({ minimum: 1, maximum: 5 })) }));
    expect(parse('http://x/a?q=abc&n=3')).toEqual({ q: 'abc', n: 3 });
    for (const url of ['http://x/a', 'http://x/a?', 'http://x/a?n=2']) {
      const err = problem(() => parse(url));
      expect(err.status).toBe(400);
      expect(err.extras.invalid_params).toEqual([{ name: 'q', reason: 'is required' }]);
    }
  });

  test('integers and numbers come back as numbers, literals and strings as sent; results are frozen and reused', () => {
    const parse = strictQuery(
      t.Object({ n: t.Optional(t.Integer()), r: t.Optional(t.Number({ maximum: 10 })), f: t.Optional(t.UnionEnum(['a', 'b'])), s: t.Optional(t.String()) }),
    );
    const a = parse('http://x/?n=7&r=2.5&f=b&s=x%20y');
    expect(a).toEqual({ n: 7, r: 2.5, f: 'b', s: 'x y' });
    expect(Object.isFrozen(a)).toBe(true);
    expect(parse('http://x/?n=7&r=2.5&f=b&s=x%20y')).toBe(a);
    expect(problem(() => parse('http://x/?f=c')).extras.invalid_params).toEqual([{ name: 'f', reason: 'must be one of a, b' }]);
  });
});
