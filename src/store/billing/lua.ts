/**
 * Writes the cursor KEYS[1] only while it is still what the caller read: ARGV[1] (empty: no
 * cursor yet), ARGV[2] the new cursor, ARGV[3] its time to live (ms). Returns 1 when written.
 */
export const CURSOR_CAS = `
local now = redis.call('GET', KEYS[1])
if (now or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;
