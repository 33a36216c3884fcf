import { z } from 'zod';

/** A grant as the stores keep it: the fields both the memory state file and the Redis codec read back. */
export const grantFields = {
  id: z.string(),
  requests: z.number().int().positive(),
  note: z.string().nullable(),
  period_id: z.string(),
  period_started_at: z.string(),
  created_at: z.string(),
};
