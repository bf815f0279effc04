/* inspect.c -- static inspection of a candidate's source (`kbv inspect`, docs/hacks.md).
 *
 * The file is parsed with the embedded interpreter's `ast`; nothing in it is executed. The
 * CUDA sources are the string constants that look like C++; kernels are `__global__`
 * functions, launches are `name<<<`. Everything found here is at most `suspect`: a pattern
 * in the source is not evidence that it ran (the dynamic detectors decide). The name of the
 * candidate's model class (for the checks on that class) comes from the loader that would
 * load the file (loader.h); a native candidate's file (loader_native.c) is not Python: the
 * whole file is scanned as the CUDA source, with no Python checks.
 */
#include "inspect.h"

#include <string.h>

#include "../proto.h"
#include "fail.h"
#include "loader.h"

static const char kInspector[] =
    "import ast, re\n"
    "KERNEL = re.compile(r'__global__\\s+(?:[\\w:<>,\\s]*?\\s)?(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?(\\w+)\\s*\\(')\n"
    "LAUNCH = re.compile(r'(\\w+)\\s*(?:<[^<>;]*>)?\\s*<<<')\n"
    "def dotted(n):\n"
    "    parts = []\n"
    "    while isinstance(n, ast.Attribute):\n"
    "        parts.append(n.attr); n = n.value\n"
    "    if isinstance(n, ast.Name):\n"
    "        parts.append(n.id); return '.'.join(reversed(parts))\n"
    "    return None\n"
    "def cuda_checks(cuda, add, at):\n"
    "    if re.search(r'cudaStreamCreate|cudaStreamNonBlocking|getStreamFromPool', cuda):\n"
    "        add('static_streams', 'info', at, 'the CUDA source creates streams')\n"
    "    if re.search(r'std::thread|pthread_create|std::async', cuda):\n"
    "        add('static_threads', 'suspect', at, 'the CUDA source starts threads')\n"
    "    if re.search(r'\\b__half\\b|__nv_bfloat16|__float2half|__float2bfloat16|wmma::precision::tf32', cuda):\n"
    "        add('static_precision_casts', 'info', at, 'the CUDA source uses half, bfloat16 or TF32 types')\n"
    "    if re.search(r'cupti|CUDA_INJECTION|dlopen', cuda):\n"
    "        add('static_profiler_tampering', 'suspect', at, 'the CUDA source mentions CUPTI, dlopen or CUDA_INJECTION')\n"
    "def inspect_source(path, cls, native):\n"
    "    with open(path, encoding='utf-8', errors='replace') as f:\n"
    "        src = f.read()\n"
    "    out = {'load_inline': False, 'kernels': [], 'launched': [], 'triton_kernels': [], 'findings': []}\n"
    "    def add(fid, sev, node, detail):\n"
    "        if any(x['id'] == fid for x in out['findings']): return\n"
    "        out['findings'].append({'id': fid, 'severity': sev, 'line': getattr(node, 'lineno', 0), 'detail': detail})\n"
    "    if native:\n" /* a native candidate (loader_native.c): the whole file is C, C++ or CUDA */
    "        out['kernels'], out['launched'] = sorted(set(KERNEL.findall(src))), sorted(set(LAUNCH.findall(src)))\n"
    "        for k in out['kernels']:\n"
    "            if k not in out['launched']:\n"
    "                add('static_kernel_not_launched', 'suspect', None, 'kernel %s is defined but no launch of it appears in the source' % k)\n"
    "        cuda_checks(src, add, None)\n"
    "        if not out['kernels']:\n"
    "            add('static_no_kernel', 'info', None, 'no __global__ kernel in the source')\n"
    "        return out\n"
    "    try:\n"
    "        tree = ast.parse(src, filename=path)\n"
    "    except SyntaxError as e:\n"
    "        out['syntax_error'] = '%s (line %s)' % (e.msg, e.lineno)\n"
    "        return out\n"
    "    except ValueError as e:\n" /* Python < 3.12: null bytes in the source */
    "        out['syntax_error'] = str(e)\n"
    "        return out\n"
    "    cuda = '\\n'.join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)\n"
    "                     and ('__global__' in n.value or '<<<' in n.value or '#include' in n.value))\n"
    "    kernels = sorted(set(KERNEL.findall(cuda)))\n"
    "    launched = set(LAUNCH.findall(cuda))\n"
    "    triton = []\n"
    "    for n in ast.walk(tree):\n"
    "        if isinstance(n, ast.FunctionDef) and any('jit' in (dotted(d.func if isinstance(d, ast.Call) else d) or '') for d in "
    "n.decorator_list):\n"
    "            triton.append(n.name)\n"
    "        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name):\n"
    "            launched.add(n.func.value.id)\n"
    "    out['kernels'], out['triton_kernels'], out['launched'] = kernels, sorted(triton), sorted(launched)\n"
    "    for k in kernels + triton:\n"
    "        if k not in launched:\n"
    "            add('static_kernel_not_launched', 'suspect', tree, 'kernel %s is defined but no launch of it appears in the source' % k)\n"
    "    cuda_checks(cuda, add, tree)\n"
    "    for n in ast.walk(tree):\n"
    "        if isinstance(n, (ast.Import, ast.ImportFrom)):\n"
    "            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or '']\n"
    "            for m in mods:\n"
    "                top = m.split('.')[0]\n"
    "                if top in ('threading', 'concurrent', 'multiprocessing'):\n"
    "                    add('static_threads', 'suspect', n, 'imports %s' % m)\n"
    "                if top in ('socket', 'urllib', 'requests', 'http', 'ftplib', 'subprocess'):\n"
    "                    add('static_network_or_process', 'suspect', n, 'imports %s' % m)\n"
    "                if top in ('inspect', 'traceback'):\n"
    "                    add('static_environment_sniffing', 'suspect', n, 'imports %s' % m)\n"
    "                if top == 'ctypes':\n"
    "                    add('static_ctypes', 'suspect', n, 'imports ctypes')\n"
    "        elif isinstance(n, ast.Call):\n"
    "            f = dotted(n.func) or ''\n"
    "            if f in ('load_inline', 'torch.utils.cpp_extension.load_inline', 'cpp_extension.load_inline', 'load', 'cpp_extension.load'):\n"
    "                out['load_inline'] = True\n"
    "            if f in ('open', 'io.open', 'os.open', 'os.listdir', 'os.scandir', 'glob.glob', 'pathlib.Path'):\n"
    "                add('static_file_access', 'suspect', n, 'calls %s' % f)\n"
    "            if f in ('os.system', 'os.popen', 'exec', 'eval', 'compile', '__import__') or f.startswith('subprocess.'):\n"
    "                add('static_exec', 'suspect', n, 'calls %s' % f)\n"
    "            if f in ('sys._getframe', 'inspect.stack', 'inspect.currentframe', 'traceback.extract_stack'):\n"
    "                add('static_environment_sniffing', 'suspect', n, 'calls %s' % f)\n"
    "            if f in ('torch.cuda.Stream', 'torch.cuda.stream'):\n"
    "                add('static_streams', 'info', n, 'uses %s' % f)\n"
    "            if f == 'setattr' and n.args and (dotted(n.args[0]) or '').split('.')[0] in ('torch', 'time', 'sys', 'builtins'):\n"
    "                add('static_monkeypatch', 'suspect', n, 'setattr on %s' % dotted(n.args[0]))\n"
    "            if f in ('torch.set_float32_matmul_precision', 'torch.use_deterministic_algorithms'):\n"
    "                add('static_global_flags', 'suspect', n, 'calls %s' % f)\n"
    "            if isinstance(n.func, ast.Attribute) and n.func.attr in ('half', 'bfloat16'):\n"
    "                add('static_precision_casts', 'info', n, 'calls .%s()' % n.func.attr)\n"
    "        elif isinstance(n, ast.Assign):\n"
    "            for t in n.targets:\n"
    "                d = dotted(t) or ''\n"
    "                if d.startswith('torch.backends.'):\n"
    "                    add('static_global_flags', 'suspect', n, 'sets %s' % d)\n"
    "                elif isinstance(t, ast.Attribute) and d.split('.')[0] in ('torch', 'time', 'sys', 'builtins', 'os'):\n"
    "                    add('static_monkeypatch', 'suspect', n, 'assigns %s' % d)\n"
    "        elif isinstance(n, ast.ClassDef) and n.name == cls:\n"
    "            bases = [dotted(b) for b in n.bases]\n"
    "            if 'Model' in bases:\n"
    "                add('static_subclasses_reference', 'info', n, '%s subclasses the problem\\'s Model' % cls)\n"
    "            for m in n.body:\n"
    "                if isinstance(m, ast.FunctionDef) and m.name == 'forward':\n"
    "                    for t in ast.walk(m):\n"
    "                        if isinstance(t, ast.Try):\n"
    "                            add('static_try_except', 'suspect', t, 'forward catches exceptions: a fallback path may hide a failing kernel')\n"
    "        elif isinstance(n, ast.Try) and any(isinstance(c, ast.Call) and (dotted(c.func) or '').endswith('load_inline') for c in ast.walk(n)):\n"
    "            add('static_try_except', 'suspect', n, 'load_inline inside try: a build failure may fall back to PyTorch')\n"
    "    if not kernels and not triton:\n"
    "        add('static_no_kernel', 'info', tree, 'no __global__ or @triton.jit kernel in the source')\n"
    "    return out\n";

/* The inspector's result as JSON (a new reference), or NULL with the Python error pending;
 * cls is the candidate's model class (NULL: none is looked for); native: the file is C, C++
 * or CUDA as a whole (a native candidate: no Python to parse). */
static json_t *run_inspector(const char *path, const char *cls, int native) {
    PyObject *code = Py_CompileString(kInspector, "<kbv inspect>", Py_file_input);
    PyObject *mod = code ? PyImport_ExecCodeModule("_kbv_inspect", code) : NULL;
    Py_XDECREF(code);
    PyObject *res = mod ? PyObject_CallMethod(mod, "inspect_source", "szi", path, cls, native) : NULL;
    Py_XDECREF(mod);
    PyObject *jsonmod = res ? PyImport_ImportModule("json") : NULL;
    PyObject *text = jsonmod ? PyObject_CallMethod(jsonmod, "dumps", "O", res) : NULL;
    Py_XDECREF(jsonmod), Py_XDECREF(res);
    const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
    json_t *j = t ? json_loads(t, 0, NULL) : NULL;
    Py_XDECREF(text);
    return j;
}

json_t *cmd_inspect(worker *w, const json_t *cmd) {
    (void)w;
    const char *path;
    kbv_err err;
    if (proto_get_str(cmd, "path", &path, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    const cand_loader *ld = loader_find(path);
    json_t *j = run_inspector(path, ld ? ld->class_name : NULL, ld && strcmp(ld->name, "native") == 0);
    if (!j) return fail_python("load", "inspecting the source");
    json_t *r = proto_ok();
    json_object_set_new(r, "inspect", j);
    return r;
}
