/** The operations' lines of `fuel-gateway --help`: kept apart so that help and a refused command line load nothing else. */
export const OPERATE_USAGE = `       fuel-gateway accounts create --plan P [--label L] [--limit N] [--anchor ISO] [--status S]
                                             [--stripe-customer cus_…] [--billing-subject S]
       fuel-gateway accounts list [--status S] [--plan P] [--label L] [--limit N] [--cursor C]
       fuel-gateway accounts show|disable|enable|delete ID
       fuel-gateway accounts rotate-key ID [--grace DURATION]   (an account with one key)
       fuel-gateway keys create ACCOUNT --name N [--expires ISO|DURATION] [--scopes a,b] [--allow CIDR,…]
       fuel-gateway keys list ACCOUNT
       fuel-gateway keys update ACCOUNT KEY_ID [--name N] [--expires ISO|DURATION|never] [--scopes a,b] [--allow CIDR,…|none]
       fuel-gateway keys revoke ACCOUNT KEY_ID
       fuel-gateway keys rotate ACCOUNT KEY_ID [--grace DURATION]   (DURATION: 90s, 15m, 6h, 30d; default 0)
       fuel-gateway accounts set-plan ID PLAN [--limit N]   (without --limit, the plan's own allowance)
       fuel-gateway accounts set-external-ids ID [--stripe-customer cus_…] [--billing-subject S]
                                             (sets those given, keeps the other; with neither, removes both)
       fuel-gateway accounts set-burst ID N/S|none  (at most N requests in any S seconds; none: the plan's)
       fuel-gateway accounts grant ID N [--note T]   (N more requests for the account's current period)
       fuel-gateway accounts grants ID       (its grants, each with its period)
       fuel-gateway prices publish FILE      (one set, or a history: an array of sets)
       fuel-gateway prices cancel DATE       (a set still scheduled)
       fuel-gateway prices show|history
       fuel-gateway usage export|periods --from DATE --to DATE [--account ID] [--format csv|json] [--out FILE]
                                             (daily or period rows; csv by default; to stdout without --out)
       fuel-gateway cache purge --all|--path P (every gateway's pass-through cache, or one path; P* a prefix)
       fuel-gateway webhooks add URL --events E[,E…] [--account ID] [--description D]
       fuel-gateway webhooks list
       fuel-gateway webhooks remove|rotate-secret|test ID
       fuel-gateway webhooks deliveries ID [--limit N]
       fuel-gateway billing failures [--exporter NAME]   (usage events a billing system refused)
       fuel-gateway billing retry --id EVENT_ID | --all [--exporter NAME]   (send them again, unchanged)`;
