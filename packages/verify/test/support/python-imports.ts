import { execFileSync } from 'node:child_process';

/** Every module a Python script imports, and those of them, by top-level name, that Python does not ship. */
export function pythonImports(script: string): { imported: string[]; foreign: string[] } {
  const imports = `import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
print(json.dumps({"imported": sorted(names), "foreign": sorted(m for m in names if m.split(".")[0] not in sys.stdlib_module_names)}))`;
  return JSON.parse(execFileSync('python3', ['-c', imports, script], { encoding: 'utf8' })) as { imported: string[]; foreign: string[] };
}
