/**
 * The schemas of the FuelSA-compatible answers (features/compat-fuelsa), as FuelSA's clients
 * parse them: the .NET client's models read `value` into an int, `date` into a DateTime and the
 * rest into strings, and ignore members they do not know.
 */
import { fuelsaCurrent } from './openapi-examples.js';

type Json = Record<string, unknown>;

const ITEM: Json = {
  _id: { type: 'string', description: 'Stable and unique: the effective date, location, fuel and grade.' },
  date: {
    type: 'string',
    format: 'date-time',
    description: 'The effective date of the set, at midnight UTC (the same calendar day in South Africa).',
  },
  location: { enum: ['Reef', 'Coast'], description: 'Reef: inland (the Gauteng price); Coast: coastal.' },
  value: {
    type: 'integer',
    minimum: 0,
    description:
      'Whole cents per litre: the rand price current.php serves × 100 (official diesel fractions rounded half-up).',
  },
};

export const compatSchemas: Json = {
  FuelsaPetrol: {
    type: 'object',
    required: ['_id', 'date', 'location', 'octane', 'type', 'value'],
    additionalProperties: false,
    properties: {
      ...ITEM,
      octane: { enum: ['93', '95'], description: 'Research octane number, as text.' },
      type: { const: 'Unleaded', description: 'Always Unleaded: lead replacement petrol is not priced.' },
    },
  },
  FuelsaDiesel: {
    type: 'object',
    required: ['_id', 'date', 'location', 'ppm', 'percentage', 'sulfates', 'value'],
    additionalProperties: false,
    properties: {
      ...ITEM,
      ppm: {
        enum: ['50', '500'],
        description: 'Sulphur limit in parts per million, as text. The wholesale list price.',
      },
      percentage: { enum: ['0.005', '0.05'], description: 'The same limit as a mass percentage, without the % sign.' },
      sulfates: { enum: ['0.005%', '0.05%'], description: 'The same with its unit.' },
    },
  },
  FuelsaResult: {
    type: 'object',
    description:
      "FuelSA's answer: every item of the sets served, coastal before inland within a set, oldest set first.",
    required: ['petrol', 'diesel'],
    additionalProperties: false,
    properties: {
      petrol: { type: 'array', items: { $ref: '#/components/schemas/FuelsaPetrol' } },
      diesel: { type: 'array', items: { $ref: '#/components/schemas/FuelsaDiesel' } },
    },
    examples: [fuelsaCurrent],
  },
};
