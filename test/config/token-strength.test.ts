import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { estimatedBits } from '../../src/config/token-strength.js';

// Its tests share nothing and spend most of their time waiting: they run 4 at a time.
t.jobs = 4;

t.test('runs, sequences and repeats are worth nothing', async (t) => {
  t.equal(estimatedBits('0123456789abcdef0123456789abcdef'), 16, 'hex: 0, 1, a, b at 4 bits each');
  t.equal(estimatedBits('abcdefghijklmnopabcdefghijklmnop'), 9, 'lower case: a, b');
  t.equal(estimatedBits('a'.repeat(64)), 4, 'a run: its first character, the rest repeat it');
  t.equal(estimatedBits('aab'), 12, 'too short to repeat: a, a, b');
  t.equal(estimatedBits('zyxwvutsrqponmlk'), 9, 'a sequence down');
  t.equal(estimatedBits('acegikmoqsuwy'), 9, 'a step of 2');
  t.equal(estimatedBits('Xq7!Xq7!Xq7!Xq7!Xq7!Xq7!Xq7!Xq7!'), 26, 'a repeated stretch: its first time only');
  t.equal(estimatedBits('Xq7!'), 26, 'the same four characters alone');
  t.equal(estimatedBits(''), 0);
});

t.test('the alphabet is the classes a token uses, 16 for hex of one case', async (t) => {
  t.equal(estimatedBits('0f'), 8);
  t.equal(estimatedBits('0F'), 8);
  t.equal(estimatedBits('0G'), Math.floor(2 * Math.log2(36)), 'digits and upper case');
  t.equal(estimatedBits('aG'), Math.floor(2 * Math.log2(52)), 'lower and upper case');
  t.equal(estimatedBits('a-'), Math.floor(2 * Math.log2(59)), 'lower case and another printable');
  t.equal(estimatedBits('aé'), Math.floor(2 * Math.log2(126)), 'lower case and beyond ASCII');
});

t.test('random tokens of 32 bytes are estimated far above 128 bits, every time', async (t) => {
  // The same 2,000 random-looking tokens each run (SHA-256 of a counter): drawn afresh, about 1 in
  // 100,000 base64url tokens is estimated at 220 bits, and a run failed by chance.
  const bytes = (i: number): Buffer => createHash('sha256').update(`token ${i}`).digest();
  const lowest = (encoding: BufferEncoding): number =>
    Math.min(...Array.from({ length: 2000 }, (_, i) => estimatedBits(bytes(i).toString(encoding))));
  t.ok(lowest('hex') >= 180, 'hex');
  t.ok(lowest('base64url') >= 220, 'base64url');
  t.ok(lowest('base64') >= 220, 'base64 (openssl rand -base64 32)');
});

t.test('a long token is measured on its first 256 characters, quickly', async (t) => {
  const started = Date.now();
  t.equal(estimatedBits(`${'ab'.repeat(5000)}${randomBytes(32).toString('hex')}`), 8);
  t.ok(Date.now() - started < 1000);
});
