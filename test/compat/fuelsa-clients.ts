/**
 * What FuelSA's own clients make of an answer, written from reading them (naileddigital/fuelsa-*;
 * none of their code is here):
 * - the .NET client (the strictest) deserializes with System.Text.Json into `int Value`,
 *   `DateTime Date` and `string` for every other field. It reads an int only from an integer
 *   literal (no fraction, no exponent, within Int32), a DateTime only from an ISO 8601 string, and
 *   never turns a number into a string. Unknown members are skipped (its default), so extra
 *   fields are allowed; a missing one would silently become 0 or null, so every field is required.
 * - the PHP client returns the body, and its WordPress plugin `json_decode`s it into arrays and
 *   reads `date` (strtotime), `location`, `octane`, `type`, `ppm`, `percentage` and `value`
 *   (`floatval(value) / 100`, shown as rand): fuelsa-decode.php does the same.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';

const INT32 = { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
const STRING = { type: 'string' };
// System.Text.Json's DateTime: ISO 8601-1:2019 extended, here always with a time and an offset.
const DATE_TIME = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,7})?(Z|[+-]\\d{2}:\\d{2})$',
};

const item = (fields: Record<string, object>) => ({
  type: 'object',
  required: ['_id', 'date', 'location', 'value', ...Object.keys(fields)],
  properties: { _id: { ...STRING, minLength: 1 }, date: DATE_TIME, location: STRING, value: INT32, ...fields },
});

export const fuelsaResultSchema = {
  type: 'object',
  required: ['petrol', 'diesel'],
  properties: {
    petrol: { type: 'array', items: item({ octane: STRING, type: STRING }) },
    diesel: { type: 'array', items: item({ ppm: STRING, percentage: STRING, sulfates: STRING }) },
  },
};

const validate = new Ajv2020({ strict: true, allErrors: true }).compile(fuelsaResultSchema);

export interface PetrolItem {
  _id: string;
  date: string;
  location: string;
  octane: string;
  type: string;
  value: number;
}
export interface DieselItem {
  _id: string;
  date: string;
  location: string;
  ppm: string;
  percentage: string;
  sulfates: string;
  value: number;
}
export interface FuelsaResult {
  petrol: PetrolItem[];
  diesel: DieselItem[];
}

/**
 * The problems the .NET client would have with `body` (none: an empty list): the schema, every
 * `value` an integer literal in the text itself (JSON.parse reads 2142.0 as 2142; System.Text.Json
 * refuses it), and every `date` a real instant.
 */
export function clientProblems(body: string): string[] {
  const parsed = JSON.parse(body) as FuelsaResult;
  const problems: string[] = [];
  if (!validate(parsed)) problems.push(...(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  for (const m of body.matchAll(/"value":([^,}\]]*)/g)) {
    if (!/^-?(0|[1-9]\d*)$/.test(m[1] as string)) problems.push(`value ${m[1]} is not an integer literal`);
  }
  for (const i of [...(parsed.petrol ?? []), ...(parsed.diesel ?? [])]) {
    if (Number.isNaN(Date.parse(i.date))) problems.push(`date ${i.date} is not a real instant`);
  }
  return problems;
}

const php = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('fuelsa-decode.php', import.meta.url));

/** Whether Debian's php-cli is here (a test states why it skips otherwise). */
export async function hasPhp(): Promise<boolean> {
  try {
    await php('php', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** The lines fuelsa-decode.php prints for `body`, decoded the way the PHP client and its plugin do. */
export async function phpDecode(body: string): Promise<string[]> {
  const child = php('php', [SCRIPT]);
  child.child.stdin?.end(body);
  const { stdout } = await child;
  return stdout.split('\n').filter((l) => l !== '');
}
