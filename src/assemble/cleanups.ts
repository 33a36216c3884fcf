/** What a stop undoes, run last first; `drainMs` is the public listener's grace for idle connections. */
export type Cleanups = Array<(drainMs: number) => void | Promise<void>>;
