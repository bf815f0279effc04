/* pycache.c -- kbv's bytecode cache for the workers' Python (docs/build.md, "Python's bytecode").
 *
 * A Python whose installed packages have no bytecode (a read-only site-packages without
 * __pycache__, as on the GPU machine: torch's 2,141 modules, none compiled) compiles every
 * module it imports from source, in every process: there each worker's start took 5-12 s of
 * CPU (`import torch` 5.2 s, with torch._dynamo 11.9 s), four or more workers an evaluation.
 * `kbv-worker --build-pycache ROOT` (run by kbv, never with a candidate) compiles, once, the
 * packages a worker imports into ROOT/<cache tag>-<key>/, a tree laid out as
 * sys.pycache_prefix expects, then makes it read-only and renames it into place (atomic:
 * another kbv that got there first wins). kbv then starts its workers with KBV_PYCACHE naming
 * that tree (py_start sets it as the interpreter's pycache_prefix) where Landlock keeps every
 * worker from writing it. Python checks each .pyc against its source's size and mtime before
 * using it and compiles from the source otherwise: the bytecode is what the worker would have
 * compiled itself.
 */
#include "pycache.h"

#include <stdio.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "py.h"

static const char kPycachePy[] =
    "import hashlib, importlib.util, os, py_compile, shutil, stat, sys, tempfile, time\n"
    "\n"
    "\n"
    "def installed_bytecode(src):\n"
    "    \"\"\"Whether the source has its bytecode beside it, as the installer left it.\"\"\"\n"
    "    saved, sys.pycache_prefix = sys.pycache_prefix, None\n"
    "    try:\n"
    "        return os.path.isfile(importlib.util.cache_from_source(src))\n"
    "    finally:\n"
    "        sys.pycache_prefix = saved\n"
    "\n"
    "\n"
    "def sources():\n"
    "    \"\"\"Every .py file of the top-level packages and modules imported now, beneath sys.path.\"\"\"\n"
    "    roots = [os.path.realpath(p) for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]\n"
    "    files, seen = [], set()\n"
    "    for name, mod in list(sys.modules.items()):\n"
    "        top = sys.modules.get(name.split('.')[0])\n"
    "        f = getattr(top, '__file__', None)\n"
    "        if not f or top in seen:\n"
    "            continue\n"
    "        seen.add(top)\n"
    "        f = os.path.realpath(f)\n"
    "        if not any(f.startswith(r + os.sep) for r in roots):\n"
    "            continue\n"
    "        if os.path.basename(f) == '__init__.py':\n"
    "            for d, dirs, names in os.walk(os.path.dirname(f)):\n"
    "                dirs[:] = [x for x in dirs if x != '__pycache__']\n"
    "                files += [os.path.join(d, n) for n in names if n.endswith('.py')]\n"
    "        elif f.endswith('.py'):\n"
    "            files.append(f)\n"
    "    return sorted(set(files))\n"
    "\n"
    "\n"
    "def key_text(init):\n"
    "    rows = [('python', sys.version), ('executable', sys.executable)]\n"
    "    for f in (init, os.path.join(os.path.dirname(init), 'version.py')):\n"
    "        if os.path.isfile(f):\n"
    "            st = os.stat(f)\n"
    "            rows.append(('file', f'{f} {st.st_size} {st.st_mtime_ns}'))\n"
    "    for p in sys.path:\n"
    "        if p and os.path.isdir(p):\n"
    "            rows.append(('path', f'{p} {os.stat(p).st_mtime_ns}'))\n"
    "    return ''.join(f'{k}={v}\\n' for k, v in rows)\n"
    "\n"
    "\n"
    "def compile_all(files, prefix, jobs):\n"
    "    \"\"\"py_compile each file into the tree under prefix, in jobs forked processes; the count compiled.\"\"\"\n"
    "    sys.pycache_prefix = prefix\n"
    "    chunks = [files[i::jobs] for i in range(jobs)]\n"
    "    sys.stdout.flush(), sys.stderr.flush()\n"
    "    pids = []\n"
    "    for chunk in chunks:\n"
    "        pid = os.fork()\n"
    "        if pid == 0:\n"
    "            bad = 0\n"
    "            for f in chunk:\n"
    "                try:\n"
    "                    py_compile.compile(f, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)\n"
    "                except Exception:\n"
    "                    bad += 1   # (a module that does not compile: its importer compiles it, and fails, as ever)\n"
    "            os._exit(0 if bad < 256 else 1)\n"
    "        pids.append(pid)\n"
    "    ok = True\n"
    "    for pid in pids:\n"
    "        ok = os.waitpid(pid, 0)[1] == 0 and ok\n"
    "    sys.pycache_prefix = None\n"
    "    if not ok:\n"
    "        raise RuntimeError('compiling the bytecode failed')\n"
    "\n"
    "\n"
    "def read_only(tree):\n"
    "    for d, dirs, names in os.walk(tree):\n"
    "        for n in names:\n"
    "            os.chmod(os.path.join(d, n), 0o444)\n"
    "    for d, dirs, names in os.walk(tree, topdown=False):\n"
    "        os.chmod(d, 0o555)\n"
    "\n"
    "\n"
    "def writable(tree):\n"
    "    for d, dirs, names in os.walk(tree):\n"
    "        os.chmod(d, 0o755)\n"
    "\n"
    "\n"
    "def build(root, always):\n"
    "    \"\"\"The tree's path, or '' where the installed packages have their bytecode (auto).\"\"\"\n"
    "    t0 = time.monotonic()\n"
    "    spec = importlib.util.find_spec('torch')   # (found, not imported: that is the slow part)\n"
    "    init = spec.origin if spec and spec.origin else ''\n"
    "    if not init.endswith('.py'):\n"
    "        raise RuntimeError('torch is not a Python package here')\n"
    "    if not always and installed_bytecode(init):\n"
    "        return ''\n"
    "    key = key_text(init)\n"
    "    final = os.path.join(root, sys.implementation.cache_tag + '-' + hashlib.sha256(key.encode()).hexdigest()[:16])\n"
    "    try:\n"
    "        with open(os.path.join(final, 'key.txt')) as f:\n"
    "            if f.read() == key:\n"
    "                read_only(final)   # (Landlock keeps workers from writing it, not from changing its modes)\n"
    "                return final\n"
    "    except OSError:\n"
    "        pass\n"
    "    # what a worker imports before the candidate's code: torch, the guard's torch._dynamo,\n"
    "    # load_inline's module (numpy where torch finds it)\n"
    "    import torch, torch.utils.cpp_extension\n"
    "    for name in ('torch._dynamo', 'numpy'):\n"
    "        try:\n"
    "            importlib.import_module(name)\n"
    "        except ImportError:\n"
    "            pass\n"
    "    files = sources()\n"
    "    os.makedirs(root, exist_ok=True)\n"
    "    tmp = tempfile.mkdtemp(prefix='.tmp-', dir=root)\n"
    "    try:\n"
    "        compile_all(files, tmp, max(1, min(32, os.cpu_count() or 1)))\n"
    "        with open(os.path.join(tmp, 'key.txt'), 'w') as f:\n"
    "            f.write(key)\n"
    "        read_only(tmp)\n"
    "        try:\n"
    "            os.rename(tmp, final)\n"
    "        except OSError:\n"
    "            if not os.path.isfile(os.path.join(final, 'key.txt')):\n"
    "                raise\n"
    "            writable(tmp)   # another kbv made it first\n"
    "            shutil.rmtree(tmp, ignore_errors=True)\n"
    "    except BaseException:\n"
    "        writable(tmp)\n"
    "        shutil.rmtree(tmp, ignore_errors=True)\n"
    "        raise\n"
    "    print(f'kbv: compiled the bytecode of {len(files)} Python modules for the workers into {final} '\n"
    "          f'in {time.monotonic() - t0:.1f} s (once)', file=sys.stderr, flush=True)\n"
    "    return final\n";

int pycache_build(const char *root, int always, kbv_err *err) {
    PyObject *d = PyDict_New();
    if (!d || PyDict_SetItemString(d, "__builtins__", PyEval_GetBuiltins()) < 0) {
        Py_XDECREF(d);
        return kbv_seterr(err, "out of memory");
    }
    PyObject *r = PyRun_String(kPycachePy, Py_file_input, d, d);
    Py_XDECREF(r);
    PyObject *fn = r ? PyDict_GetItemString(d, "build") : NULL; /* (borrowed) */
    PyObject *path = fn ? PyObject_CallFunction(fn, "si", root, always) : NULL;
    const char *s = path ? PyUnicode_AsUTF8(path) : NULL;
    if (!s) {
        py_take_error(err, NULL, NULL);
        Py_XDECREF(path);
        Py_DECREF(d);
        return -1;
    }
    printf("%s\n", s); /* the tree, or an empty line: the installed bytecode is used */
    fflush(stdout);
    Py_DECREF(path);
    Py_DECREF(d);
    return 0;
}
