import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { KeyHashes } from '../../src/keys/key-hashes.js';

t.test('a scan of made-up keys leaves at most max keys remembered, and a key in use stays remembered', async (t) => {
  const max = 100;
  const memo = new KeyHashes<string>(max);
  const customer = generateKey();
  const first = memo.of(customer);
  t.ok(first, 'a well-formed key is remembered');
  const scan = Array.from({ length: 10 * max }, () => generateKey());
  let recorded = 0;
  let kept = 0;
  for (const key of scan) {
    if (memo.of(key)) recorded++;
    if (memo.seen(customer) === first) kept++;
  }
  t.equal(recorded, scan.length, 'every well-formed key gets its record');
  t.equal(kept, scan.length, 'the key in use keeps its record through the scan');
  const remembered = scan.filter((key) => memo.seen(key) !== undefined).length;
  t.ok(remembered <= max, `${remembered} of the scan's ${scan.length} keys remembered (at most ${max})`);
  t.ok(remembered >= max / 2 - 1, 'the latest keys are remembered');
  t.equal(memo.seen(scan.at(-1) as string)?.hash.length, 64, 'the last key seen is remembered with its hash');
  t.equal(memo.of('fpg_not-a-key'), null, 'a malformed key gets no record');
});
