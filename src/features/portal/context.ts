import type { PortalConfig } from '../../config/portal-config.js';
import type { PortalDeps } from './deps.js';
import type { SendLimit } from './send-limit.js';

/** What every portal handler reads: its settings, the operations it is handed, and its own address. */
export interface PortalContext {
  config: PortalConfig;
  deps: PortalDeps;
  /** `portal.base_url`, or the public listener's address: never the request's `Host`, which the client picks. */
  baseUrl: () => string;
  /** Test events and replays an account may ask for now (send-limit.ts). */
  sends: SendLimit;
}

/** What a link's sending needs (also an operator's approval, outside any request). */
export type LinkContext = Pick<PortalContext, 'config' | 'deps' | 'baseUrl'>;

/** The graces a person may choose when rolling a key: none, 15 minutes, an hour, a day, a week. */
export const GRACES_S = [0, 900, 3600, 86_400, 604_800] as const;
