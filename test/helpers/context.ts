/**
 * What a helper needs from a tap test: somewhere to register its clean-up. One type, so every
 * helper that starts something (a gateway, an origin, a Redis, a child) takes the same argument.
 */
export interface TestContext {
  teardown(fn: () => unknown): void;
}
