/**
 * The layers of src/, as rules (dependency-cruiser). test/architecture/layers.test.ts runs them in
 * `npm test`; a violation fails the suite with the rule's name. The picture is in
 * docs/architecture.md.
 *
 * Layers, lowest first. A module may import its own layer and the layers below it, never above:
 *
 *   1 foundation   errors, clock, key-format, log/, config/, time/, metrics/, telemetry/ (traces: the
 *                  SDK behind interfaces, loaded only when on), events/ (event shapes, ids,
 *                  signing, the address policy of webhooks and billing exporters), and
 *                  prices/price-set-schema.ts (the shape of a price set: a definition the store
 *                  keeps and the domain reads; it imports nothing of src/)
 *   2 store        store/ (accounts, counting, prices, coordination; memory and Redis)
 *   3 domain       keys/, quota/, prices/ (the meter, the price book, key handling)
 *   4 http core    http/ (listener, request parsing, answers, error table, metered pipeline)
 *   5 upstream     upstream/ (the origin client: poller and pass-through engine), webhooks/
 *                  (the other outbound client: delivery of the outbox, and the price events),
 *                  billing/ (the usage exporters to billing systems)
 *   6 features     features/<name>/ (each hands its routes to the core), admin/ (the admin
 *                  listener and its operations)
 *   7 composition  app.ts and assemble/ (its builders), public-routes.ts, main.ts, cli/, cluster/,
 *                  topology/ (the runner of `npm run topology`:
 *                  it starts gateways as processes and imports no gateway code beyond config/)
 *
 * Type-only imports count (tsPreCompilationDeps): a type names the module it comes from as
 * surely as a value does.
 */
const LAYERS = [
  { name: 'foundation', path: '^src/((failures|clock|key-format)\\.ts$|(config|time|metrics|events|log|telemetry)/|prices/price-set-schema\\.ts$)' },
  { name: 'store', path: '^src/store/' },
  { name: 'domain', path: '^src/(keys|quota)/|^src/prices/(?!price-set-schema\\.ts$)' },
  { name: 'http', path: '^src/http/' },
  { name: 'upstream', path: '^src/(upstream|webhooks|billing)/' },
  { name: 'features', path: '^src/(features|admin)/' },
  { name: 'composition', path: '^src/((app|main|public-routes)\\.ts$|(assemble|cli|cluster|topology)/)' },
];

/**
 * The walk of one metered request through http/, in order (docs/architecture.md): the front door,
 * the metered pipeline's entry and its passes (the key, the count with its admission, the
 * outcome), the answer. A step hands on to later steps only, so the walk never comes back to a
 * file it left.
 */
const STEPS = ['public', 'metered/index', 'metered/key', 'metered/count', 'metered/outcome', 'answer'];
const step = (name) => `^src/http/${name}\\.ts$`;
const oneWay = STEPS.slice(1).map((name, i) => ({
  name: `pipeline-one-way-from-${name.replace('/', '-')}`,
  comment: `http/${name}.ts is a step of the request's walk: it imports no earlier step (${STEPS.slice(0, i + 1).join(', ')}).`,
  severity: 'error',
  from: { path: step(name) },
  to: { path: STEPS.slice(0, i + 1).map((s) => `(${step(s)})`).join('|') },
}));

/** One rule per layer: nothing in it imports a layer above it. */
const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `no-upward-import-from-${layer.name}`,
  comment: `${layer.name} may import only itself and the layers below it (${LAYERS.slice(0, i)
    .map((l) => l.name)
    .join(', ') || 'none'}).`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(i + 1).map((l) => `(${l.path})`).join('|') },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports: each layer and each module can be read bottom-up.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    ...oneWay,
    {
      name: 'pipeline-steps-stay-in-http',
      comment:
        'Outside http/, the request pipeline is http/metered/pipeline.ts (the features) and http/public.ts (assemble/listeners.ts builds the listener with it): its passes and their context are the core\'s own.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/http/' },
      to: {
        path: '^src/http/((metered/(?!pipeline\\.ts$))|(answer|key-check|listener-context|routes|cors|response-headers)\\.ts$)',
      },
    },
    {
      name: 'no-feature-imports-another-feature',
      comment:
        'A feature changes without reading the others (fastify plugins): what one needs of another is handed over by app.ts.',
      severity: 'error',
      from: { path: '^src/features/([^/]+)/' },
      to: { path: '^src/features/', pathNot: '^src/features/$1/' },
    },
    {
      name: 'features-use-the-pipeline-api',
      comment:
        'A feature reaches the request pipeline through http/metered/pipeline.ts (take the key, map the meter outcome, answer), never its passes (metered/index.ts, key.ts, count.ts, outcome.ts) nor the core behind them (answer.ts, listener-context.ts ...); beside it only the route-definition modules: types, the error table, the API document, encoding, prebuilt answers, ETags.',
      severity: 'error',
      from: { path: '^src/features/' },
      to: { path: '^src/http/', pathNot: '^src/http/(metered/pipeline|core-types|error-kinds|openapi|encoding|prebuilt|etag)\\.ts$' },
    },
    {
      name: 'no-admin-feature-imports',
      comment: 'The admin listener and the public features are apart: neither imports the other.',
      severity: 'error',
      from: { path: '^src/(admin|features)/' },
      to: { path: '^src/(admin|features)/', pathNot: '^src/$1/' },
    },
    {
      name: 'store-imports-nothing-above',
      comment: 'store/ sits on the foundation alone: it knows no domain, no HTTP, no feature.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: `^src/store/|${LAYERS[0].path}` },
    },
    {
      name: 'every-module-in-a-layer',
      comment: 'A new folder of src/ is given its layer here before it is used.',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => `(${l.path})`).join('|') },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
// For test/architecture/layers.test.ts, which checks that every layer still names modules (a
// pattern left behind by a move would make its rules pass vacuously). Not enumerable: the
// checker validates its config's keys.
Object.defineProperty(module.exports, 'layers', { value: LAYERS, enumerable: false });
