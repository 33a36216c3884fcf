/**
 * How many bits an admin token is worth to someone guessing it, estimated simply enough to
 * state in the docs (docs/admin-api.md "The admin token"). It cannot know where a token came
 * from; it counts what a guesser gets for free in tokens people type, and costs a random token
 * almost nothing:
 *
 * - a character is worth log2 of the token's alphabet: 16 when the token is all hex digits of
 *   one case, else the classes it draws on added up (10 digits, 26 lower case, 26 upper case,
 *   33 other printable ASCII, 100 for anything else);
 * - a character that goes on with the step of the two before it (a step of -5 to +5 in code
 *   points: `aaa`, `abc`, `9876`, `acegi`) is worth nothing;
 * - a stretch of 3 or more characters seen earlier in the token (`abcabc`, `xyzxyz`) is
 *   worth nothing.
 *
 * Dictionary words are not looked for: a passphrase of common words is estimated far above its
 * worth. The rule is there to refuse the tokens a person makes up, not to grade random ones.
 */

const MIN_REPEAT = 3;
const MAX_STEP = 5;
// Longer tokens are measured on their start: a token this long that is short of the target
// there is a pattern, and the repeat search stays cheap (its cost grows with the cube).
const MEASURED = 256;

function alphabet(token: string): number {
  if (/^[0-9a-f]+$/.test(token) || /^[0-9A-F]+$/.test(token)) return 16;
  const classes: Array<[RegExp, number]> = [
    [/[0-9]/, 10],
    [/[a-z]/, 26],
    [/[A-Z]/, 26],
    [/[\x20-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]/, 33],
    [/[^\x20-\x7e]/, 100],
  ];
  return classes.reduce((n, [re, size]) => (re.test(token) ? n + size : n), 0);
}

/** The length of the longest stretch from `i` that also starts at an earlier position (overlap allowed). */
function repeated(c: readonly string[], i: number): number {
  let longest = 0;
  for (let j = 0; j < i; j++) {
    let n = 0;
    while (i + n < c.length && c[j + n] === c[i + n]) n++;
    longest = Math.max(longest, n);
  }
  return longest;
}

/** The estimated entropy of `token`, in bits (rounded down). */
export function estimatedBits(token: string): number {
  const c = [...token].slice(0, MEASURED);
  const code = c.map((ch) => ch.codePointAt(0) as number);
  const perChar = Math.log2(Math.max(alphabet(c.join('')), 1));
  let free = 0;
  for (let i = 0; i < c.length; ) {
    const again = repeated(c, i);
    if (again >= MIN_REPEAT) {
      i += again;
      continue;
    }
    const step = i >= 2 ? (code[i] as number) - (code[i - 1] as number) : Number.NaN;
    const run = Math.abs(step) <= MAX_STEP && step === (code[i - 1] as number) - (code[i - 2] as number);
    if (!run) free++;
    i++;
  }
  return Math.floor(free * perChar);
}
