/** Polls `cond` until it holds (a rejection counts as false); throws after `ms`. Returns the time it took. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<number> {
  const start = Date.now();
  while (
    !(await Promise.resolve()
      .then(cond)
      .catch(() => false))
  ) {
    if (Date.now() - start > ms) throw new Error(`gave up waiting for ${what} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}
