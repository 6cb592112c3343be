/** The error of class `cls` that `fn` throws; fails the test if it throws nothing or something else. */
export function thrown<E extends Error>(cls: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof cls) return err;
    throw err;
  }
  throw new Error(`expected a ${cls.name}`);
}
