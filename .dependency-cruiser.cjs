// The layers of src/ and the rules that keep them (issue #25; docs/architecture.md draws them). Read by
// test/unit/structure/layering.test.ts (in `make test`) and by `make layers` (the report for a reader).
//
// LAYERS lists every folder of src/ from the bottom up. A module may import its own folder and any folder listed
// BEFORE its own, never one listed after: so there is no import cycle between folders and no upward arrow. The
// groups are for the reader; the order inside a group is the rule too (e.g. rpc before receipts: receipts read
// the upstream for landings). Files at the top of src/ (main.ts, cli.ts, ...) and workers/ are the entry points:
// they may import anything, and nothing under src/<folder>/ may import them.
const LAYERS = [
  { name: 'foundation', folders: ['errors', 'log', 'threads', 'native', 'shm'] },
  { name: 'codecs and transports', folders: ['tx', 'metrics', 'jsonrpc', 'quic', 'http', 'geyser'] },
  { name: 'configuration', folders: ['config'] },
  { name: 'the relay', folders: ['telemetry', 'admission', 'rpc', 'ingress', 'receipts', 'egress', 'bundles'] },
  { name: 'operations', folders: ['health', 'cluster', 'reload', 'status', 'doctor'] },
  { name: 'hosts and tools', folders: ['localnet', 'landing-bench', 'client', 'front'] },
];

// Inside src/egress/, by concern (the same rule one level down): the route contract every route implements; the
// routes of the egress workers (rpc, jito, discard), rebroadcast and the QUIC routes with their connection layer,
// which know the contract and not each other; and on top the consumers that run them (the ring consumer loop, the
// pool that supervises the threads, the QUIC thread's body).
const EGRESS = [['contract'], ['worker-routes', 'rebroadcast', 'quic'], ['consumer']];

const ORDER = LAYERS.flatMap((l) => l.folders);
const alt = (names) => `(${names.join('|')})`;

const upward = ORDER.slice(0, -1).map((folder, i) => ({
  name: `upward-from-${folder}`,
  comment: `src/${folder}/ may import only folders listed before it in LAYERS (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: `^src/${alt(ORDER.slice(i + 1))}/` },
}));

const egress = EGRESS.flatMap((tier, i) =>
  tier.map((folder) => ({
    name: `egress-${folder}`,
    comment: `src/egress/${folder}/ may import only the egress folders of the tiers below it, not its peers (EGRESS)`,
    severity: 'error',
    from: { path: `^src/egress/${folder}/` },
    to: { path: `^src/egress/${alt([...EGRESS.slice(i + 1).flat(), ...tier.filter((f) => f !== folder)])}/` },
  })),
).filter((r) => !r.to.path.endsWith('()/'));

module.exports = {
  forbidden: [
    ...upward,
    ...egress,
    {
      name: 'egress-loose-file',
      comment: 'every file of src/egress/ lives in one of its concern folders (EGRESS)',
      severity: 'error',
      from: { path: '^src/egress/[^/]+\\.ts$' },
      to: {},
    },
    {
      name: 'unlisted-folder',
      comment: 'every folder of src/ has its place in LAYERS',
      severity: 'error',
      from: { path: '^src/[^/]+/' , pathNot: `^src/${alt(ORDER)}/` },
      to: {},
    },
    {
      name: 'entry-point-imported',
      comment: 'src/*.ts and workers/ are entry points: nothing inside a layer imports them',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^(src/[^/]+\\.ts$|workers/)' },
    },
    {
      name: 'dev-dependency-at-run-time',
      comment: 'src/ and workers/ run in production, where only package.json dependencies are installed (a type-only import is erased)',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'folder-cycle',
      comment: 'no module-level import cycle that leaves a folder (a cycle inside one folder is that folder\'s business)',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, viaSomeNot: '^src/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules stays in the graph as leaves (doNotFollow) so that dev-dependency-at-run-time sees those imports.
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: false,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
