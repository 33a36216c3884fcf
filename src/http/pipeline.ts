/**
 * The request pipeline as a feature's own handler sees it: take the request's key (`keyOf`), map
 * the meter's outcome to the answer (outcome.ts, the one mapping every route that takes a key
 * shares), answer, and account for an answer written elsewhere. Features import the pipeline
 * from here only (.dependency-cruiser.cjs); its steps (metered.ts, outcome.ts, answer.ts,
 * context.ts) may change behind it.
 */
export { crashed, fail, record, send } from './answer.js';
export { storeWorked } from './context.js';
export { keyOf } from './metered.js';
export { admitted, answerCounted, refuse, storeFailed } from './outcome.js';
export { rateFields, rateHeaders } from './rate.js';
export type { Target } from './request.js';
