// Preloaded into a gateway child (NODE_OPTIONS=--import) by tests that need its wall clock
// elsewhere: Date.now and new Date() run FPG_TEST_CLOCK_SHIFT_MS ahead, so a day boundary of the
// configured zone can fall inside a test. Timers and Redis' clock (performance) are untouched.
const shift = Number(process.env.FPG_TEST_CLOCK_SHIFT_MS ?? 0);
const RealDate = Date;
const now = () => RealDate.now() + shift;
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(now());
    else super(...args);
  }
  static now() {
    return now();
  }
}
globalThis.Date = ShiftedDate;
