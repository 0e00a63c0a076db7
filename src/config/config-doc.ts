import { z } from 'zod';
import { configEnvSchema } from './config.schema';

/** Default of a schema field as the docs show it, or undefined when the setting has none. */
function defaultOf(schema: z.ZodType): string | undefined {
  const result = schema.safeParse(undefined);
  if (!result.success || result.data === undefined) return undefined;
  const value: unknown = result.data;
  return Array.isArray(value) ? value.join(',') : JSON.stringify(value).replace(/^"|"$/g, '');
}

/** docs/configuration.md, rendered from the schema so descriptions and defaults cannot drift from the code. */
export function renderConfigurationDoc(): string {
  const rows = Object.entries(configEnvSchema.shape).map(([name, schema]) => {
    const s = schema as z.ZodType;
    const def = defaultOf(s);
    return (
      `| \`${name}\` | ${def === undefined ? '(unset)' : def === '' ? '(empty)' : `\`${def}\``} ` +
      `| ${s.description ?? ''} |`
    );
  });
  return [
    '# Configuration',
    '',
    'Every setting is an environment variable, read once at start by `src/config/load-config.ts`, validated by the',
    'zod schema in `src/config/config.schema.ts` and frozen. An invalid value stops the process with a message naming',
    'the variable. This page is generated from the schema (`npm run build && npm run docs:config`).',
    '',
    '| Variable | Default | Meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
