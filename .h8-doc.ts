import { writeFileSync } from 'node:fs';
import { buildOpenApi, loadSpecs } from '#shared/openapi/document.ts';
writeFileSync('/tmp/h8/doc.json', JSON.stringify(buildOpenApi(await loadSpecs((h) => import(`/work/main/functions/${h}.ts`)))));
process.exit(0);
