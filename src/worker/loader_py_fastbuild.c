/* loader_py_fastbuild.c -- load_inline's C++ compile with a precompiled header of torch/extension.h
 * (docs/build.md).
 *
 * Torch writes build.ninja as always; with KBV_BUILD=fast the worker wraps the one seam
 * torch.utils.cpp_extension._write_ninja_file_to_build_library (called with keywords, path=
 * first, from torch 1.13 to 2.x) before the candidate is imported. After torch has written
 * build.ninja, it checks that every C++ source begins with `#include <torch/extension.h>` and
 * that kbv built a precompiled header under $KBV_PCH_DIR for exactly this compiler, torch and
 * cflags (TORCH_EXTENSION_NAME aside, which the header never reads), whose headers are
 * unchanged; then it appends `-Winvalid-pch -Werror=invalid-pch -include DIR/torch_ext.h` to
 * cflags and runs ninja there, and torch's own ninja step that follows finds nothing left to
 * do. The header is #pragma once, so the source's own first line is then a no-op and the
 * translation unit is the same (the objects are byte-identical, docs/build.md). Anything else
 * -- no header, another flag, a changed header, a failed fast build -- puts torch's own
 * build.ninja back byte for byte before torch's step runs, so a stock build, its error text
 * and its traceback are torch's alone: a verdict never comes from the fast path. .cu files are
 * untouched (nvcc has no use for a g++ PCH). Each build notes the path it took in
 * BUILD_DIR/kbv_build.log.
 *
 * The headers are built by kbv-worker --build-pch ROOT, run by kbv before any candidate
 * (trusted: the candidate's worker can only read ROOT). The flag sets come from load_inline
 * itself (a probe build stopped before ninja), so they are what a candidate gets.
 */
#include "loader_py_fastbuild.h"

#include <stdlib.h>
#include <string.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "py.h"

/* The Python half: run once into a module of its own (kbv_fastbuild). */
static const char kFastbuildPy[] =
    "import os, re, shutil, subprocess, sys, hashlib, tempfile, time\n"
    "import torch\n"
    "import torch.utils.cpp_extension as ce\n"
    "\n"
    "HEADER = '#include <torch/extension.h>'\n"
    "RULE = '  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags'\n"
    "NAME = re.compile(r'(?:^| )-DTORCH_EXTENSION_NAME=\\S*')\n"
    "GUARD = ' -Winvalid-pch -Werror=invalid-pch -include '\n"
    "\n"
    "\n"
    "class Stock(Exception):\n"
    "    pass\n"
    "\n"
    "\n"
    "def ninja_vars(text):\n"
    "    v = {}\n"
    "    for line in text.split('\\n'):\n"
    "        m = re.match(r'^(cxx|cflags|post_cflags) = ?(.*)$', line)\n"
    "        if m:\n"
    "            v[m.group(1)] = m.group(2)\n"
    "    if len(v) != 3:\n"
    "        raise Stock('build.ninja lacks cxx, cflags or post_cflags')\n"
    "    return v\n"
    "\n"
    "\n"
    "def key_text(v):\n"
    "    ver = subprocess.run(v['cxx'] + ' --version', shell=True, capture_output=True, text=True, timeout=60)\n"
    "    first = ver.stdout.split('\\n')[0] if ver.returncode == 0 else ''\n"
    "    if not first:\n"
    "        raise Stock('cannot run ' + v['cxx'] + ' --version')\n"
    "    rows = [('torch', torch.__version__), ('torch_dir', os.path.dirname(os.path.abspath(torch.__file__))),\n"
    "            ('cxx', v['cxx']), ('cxx_version', first),\n"
    "            ('cflags', NAME.sub('', v['cflags']).strip()), ('post_cflags', v['post_cflags'].strip())]\n"
    "    return ''.join(f'{k}={x}\\n' for k, x in rows)\n"
    "\n"
    "\n"
    "def pch_dir(root, key):\n"
    "    tag = re.sub(r'[^A-Za-z0-9.+_-]', '_', torch.__version__)\n"
    "    return os.path.join(root, tag + '-' + hashlib.sha256(key.encode()).hexdigest()[:16])\n"
    "\n"
    "\n"
    "def read(path):\n"
    "    with open(path, encoding='utf-8', errors='surrogateescape') as f:\n"
    "        return f.read()\n"
    "\n"
    "\n"
    "def deps_ok(d):\n"
    "    for line in read(os.path.join(d, 'deps.txt')).splitlines():\n"
    "        size, mtime, path = line.split(' ', 2)\n"
    "        st = os.stat(path)\n"
    "        if st.st_size != int(size) or st.st_mtime_ns != int(mtime):\n"
    "            return False\n"
    "    return True\n"
    "\n"
    "\n"
    "def unescape(s):\n"
    "    return re.sub(r'\\$(.)', r'\\1', s)\n"
    "\n"
    "\n"
    "def plan(root, bd):\n"
    "    text = read(os.path.join(bd, 'build.ninja'))\n"
    "    lines = text.split('\\n')\n"
    "    if RULE not in lines:\n"
    "        raise Stock('the compile rule is not the one kbv knows')\n"
    "    v = ninja_vars(text)\n"
    "    srcs = [unescape(m.group(1)) for m in re.finditer(r'^build [^\\n]*?: compile (.*)$', text, re.M)]\n"
    "    if not srcs:\n"
    "        raise Stock('no C++ source')\n"
    "    for s in srcs:\n"
    "        with open(s, encoding='utf-8', errors='surrogateescape') as f:\n"
    "            if f.readline().rstrip('\\n') != HEADER:\n"
    "                raise Stock(s + ' does not begin with ' + HEADER)\n"
    "    key = key_text(v)\n"
    "    d = pch_dir(root, key)\n"
    "    if not os.path.isfile(os.path.join(d, 'torch_ext.h.gch')) or read(os.path.join(d, 'key.txt')) != key:\n"
    "        raise Stock('no precompiled header for these flags')\n"
    "    if not deps_ok(d):\n"
    "        raise Stock('a header changed since the precompiled header was built')\n"
    "    inc = os.path.join(d, 'torch_ext.h')\n"
    "    if re.search(r'[^A-Za-z0-9._+/-]', inc):\n"
    "        raise Stock('the precompiled header path would need quoting')\n"
    "    out = [l + GUARD + inc if l.startswith('cflags = ') else l for l in lines]\n"
    "    return text, '\\n'.join(out), d\n"
    "\n"
    "\n"
    "def note(bd, line):\n"
    "    try:\n"
    "        with open(os.path.join(bd, 'kbv_build.log'), 'a') as f:\n"
    "            f.write(line + '\\n')\n"
    "    except OSError:\n"
    "        pass\n"
    "\n"
    "\n"
    "def write(path, text):\n"
    "    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:\n"
    "        f.write(text)\n"
    "\n"
    "\n"
    "def install(root):\n"
    "    \"\"\"Route torch's build through the check: after torch writes build.ninja, build with the PCH\n"
    "    here; on any refusal or failure put torch's build.ninja back, byte for byte. Torch's own\n"
    "    ninja step runs next either way (nothing left to do after a fast build), so a stock build,\n"
    "    its errors and their traceback are torch's alone: no frame of this module is on them.\"\"\"\n"
    "    write_ninja = ce._write_ninja_file_to_build_library\n"
    "\n"
    "    def write_ninja_file_to_build_library(*args, **kwargs):\n"
    "        r = write_ninja(*args, **kwargs)\n"
    "        path = kwargs.get('path', args[0] if args else None)\n"
    "        bd = os.path.dirname(os.path.abspath(path)) if isinstance(path, str) else None\n"
    "        if bd:\n"
    "            fast_build(root, bd, bool(kwargs.get('verbose', False)))\n"
    "        return r\n"
    "    write_ninja_file_to_build_library.__wrapped__ = write_ninja\n"
    "    ce._write_ninja_file_to_build_library = write_ninja_file_to_build_library\n"
    "\n"
    "\n"
    "def up_to_date(bd):\n"
    "    \"\"\"Whether torch's own build.ninja has nothing to do: built before by the stock path\n"
    "    (before the header existed, say), it is kept, not compiled again with the header.\"\"\"\n"
    "    try:\n"
    "        p = subprocess.run(['ninja', '-n'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=bd, timeout=60)\n"
    "    except Exception:\n"
    "        return False\n"
    "    return p.returncode == 0 and b'no work to do' in p.stdout\n"
    "\n"
    "\n"
    "def fast_build(root, bd, verbose):\n"
    "    if os.path.exists(os.path.join(bd, '.ninja_log')) and up_to_date(bd):\n"
    "        note(bd, 'stock: built before by torch\\'s own build.ninja, which has nothing to do')\n"
    "        return\n"
    "    try:\n"
    "        stock_text, fast_text, d = plan(root, bd)\n"
    "    except Exception as e:\n"
    "        note(bd, f'stock: {type(e).__name__}: {e}')\n"
    "        return\n"
    "    path = os.path.join(bd, 'build.ninja')\n"
    "    command = ['ninja', '-v']\n"
    "    jobs = os.environ.get('MAX_JOBS')\n"
    "    if jobs is not None and jobs.isdigit():\n"
    "        command += ['-j', jobs]\n"
    "    t0 = time.monotonic()\n"
    "    try:\n"
    "        write(path, fast_text)\n"
    "        sys.stdout.flush()\n"
    "        sys.stderr.flush()\n"
    "        p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=bd, env=os.environ.copy())\n"
    "        if p.returncode == 0:\n"
    "            if verbose:\n"
    "                os.write(1, p.stdout)\n"
    "            note(bd, f'fast: {time.monotonic() - t0:.2f} s with {d}')\n"
    "            return\n"
    "        note(bd, f'fast failed after {time.monotonic() - t0:.2f} s (ninja exit {p.returncode}); stock')\n"
    "    except Exception as e:\n"
    "        note(bd, f'fast failed after {time.monotonic() - t0:.2f} s ({type(e).__name__}); stock')\n"
    "    write(path, stock_text)\n"
    "\n"
    "\n"
    "class Probe(Exception):\n"
    "    pass\n"
    "\n"
    "\n"
    "def probe(work, extra, with_cuda):\n"
    "    \"\"\"The cxx, cflags and post_cflags load_inline writes for these options, from load_inline itself.\"\"\"\n"
    "    bd = tempfile.mkdtemp(prefix='probe-', dir=work)\n"
    "    got = {}\n"
    "    def capture(build_directory, verbose, error_prefix, *a, **k):\n"
    "        got['text'] = read(os.path.join(build_directory, 'build.ninja'))\n"
    "        raise Probe()\n"
    "    saved = ce._run_ninja_build\n"
    "    ce._run_ninja_build = capture\n"
    "    try:\n"
    "        ce.load_inline(name='kbv_pch_probe', cpp_sources=[''], extra_cflags=list(extra) or None,\n"
    "                       with_cuda=with_cuda, build_directory=bd)\n"
    "    except Probe:\n"
    "        pass\n"
    "    finally:\n"
    "        ce._run_ninja_build = saved\n"
    "        shutil.rmtree(bd, ignore_errors=True)\n"
    "    if 'text' not in got:\n"
    "        raise Stock('load_inline wrote no build.ninja')\n"
    "    return ninja_vars(got['text'])\n"
    "\n"
    "\n"
    "def prepare(root, v, key):\n"
    "    d = tempfile.mkdtemp(prefix='.tmp-', dir=root)\n"
    "    write(os.path.join(d, 'torch_ext.h'), HEADER + '\\n')\n"
    "    write(os.path.join(d, 'check.cpp'), HEADER + '\\nint kbv_pch_check() { return 0; }\\n')\n"
    "    flags = NAME.sub('', v['cflags']).strip()\n"
    "    write(os.path.join(d, 'build.ninja'), '\\n'.join([\n"
    "        'ninja_required_version = 1.3', f'cxx = {v[\"cxx\"]}', f'cflags = {flags}', f'post_cflags = {v[\"post_cflags\"]}', '',\n"
    "        'rule pch', '  command = $cxx -x c++-header -MD -MF $out.d $cflags -c $in -o $out $post_cflags', '',\n"
    "        'rule check',\n"
    "        '  command = $cxx -DTORCH_EXTENSION_NAME=kbv_pch_check $cflags' + GUARD + '$pchdir/torch_ext.h -c $in -o $out $post_cflags', '',\n"
    "        'build torch_ext.h.gch: pch torch_ext.h', f'build check.o: check check.cpp | torch_ext.h.gch', f'  pchdir = {d}', '']))\n"
    "    write(os.path.join(d, 'key.txt'), key)\n"
    "    return d\n"
    "\n"
    "\n"
    "def finish(tmp, final):\n"
    "    dep = read(os.path.join(tmp, 'torch_ext.h.gch.d')).replace('\\\\\\n', ' ').split()[1:]\n"
    "    rows = []\n"
    "    for p in dep:\n"
    "        if os.path.isabs(p):\n"
    "            st = os.stat(p)\n"
    "            rows.append(f'{st.st_size} {st.st_mtime_ns} {p}\\n')\n"
    "    write(os.path.join(tmp, 'deps.txt'), ''.join(rows))\n"
    "    for f in os.listdir(tmp):\n"
    "        p = os.path.join(tmp, f)\n"
    "        if f in ('torch_ext.h', 'torch_ext.h.gch', 'key.txt', 'deps.txt', 'build.ninja'):\n"
    "            os.chmod(p, 0o444)\n"
    "        else:\n"
    "            os.remove(p)\n"
    "    os.chmod(tmp, 0o755)\n"
    "    try:\n"
    "        os.rename(tmp, final)\n"
    "    except OSError:\n"
    "        shutil.rmtree(tmp, ignore_errors=True)   # another kbv made it first\n"
    "\n"
    "\n"
    "def make(root, sets):\n"
    "    \"\"\"Build one precompiled header per flag set (and with_cuda when torch has CUDA) under root.\"\"\"\n"
    "    os.makedirs(root, exist_ok=True)\n"
    "    work = tempfile.mkdtemp(prefix='.probe-', dir=root)\n"
    "    todo, seen = [], set()\n"
    "    try:\n"
    "        for with_cuda in [False] + ([True] if torch.version.cuda else []):\n"
    "            for extra in sets:\n"
    "                v = probe(work, extra, with_cuda)\n"
    "                key = key_text(v)\n"
    "                final = pch_dir(root, key)\n"
    "                if final in seen:\n"
    "                    continue\n"
    "                seen.add(final)\n"
    "                label = ('cuda' if with_cuda else 'cpu') + ' [' + ' '.join(extra) + ']'\n"
    "                if os.path.isfile(os.path.join(final, 'torch_ext.h.gch')) and read(os.path.join(final, 'key.txt')) == key and deps_ok(final):\n"
    "                    print(f'kept {final} ({label})', flush=True)\n"
    "                    continue\n"
    "                todo.append((prepare(root, v, key), final, label))\n"
    "    finally:\n"
    "        shutil.rmtree(work, ignore_errors=True)\n"
    "    t0 = time.monotonic()\n"
    "    procs = [(subprocess.Popen(['ninja'], cwd=t, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), t, f, l) for t, f, l in todo]\n"
    "    failed = []\n"
    "    for p, tmp, final, label in procs:\n"
    "        out = p.communicate()[0].decode(errors='replace')\n"
    "        if p.returncode == 0:\n"
    "            finish(tmp, final)\n"
    "            print(f'built {final} ({label}) in {time.monotonic() - t0:.1f} s', flush=True)\n"
    "        else:\n"
    "            shutil.rmtree(tmp, ignore_errors=True)\n"
    "            failed.append(f'{label}: {out[-2000:]}')\n"
    "    if failed:\n"
    "        raise RuntimeError('precompiled header not built: ' + ' | '.join(failed))\n"
    "\n"
    "\n"
    "def make_sets(root, sets):\n"
    "    \"\"\"make() with the flag sets as kbv passes them: ';'-separated sets of space-separated flags.\"\"\"\n"
    "    make(root, [s.split() for s in sets.split(';')])\n"
    "\n";

/* The module, made on first use; NULL with the Python error pending. */
static PyObject *module(void) {
    static PyObject *mod;
    if (mod) return mod;
    PyObject *m = PyModule_New("kbv_fastbuild");
    PyObject *d = m ? PyModule_GetDict(m) : NULL;
    if (d && PyDict_SetItemString(d, "__builtins__", PyEval_GetBuiltins()) == 0) {
        PyObject *r = PyRun_String(kFastbuildPy, Py_file_input, d, d);
        if (r) {
            Py_DECREF(r);
            return mod = m;
        }
    }
    Py_XDECREF(m);
    return NULL;
}

/* The folder of precompiled headers: $KBV_PCH_DIR, else pch beside the candidate's compile
 * cache (TORCH_EXTENSIONS_DIR is BASE/<candidate>, the headers BASE/pch). */
static int pch_root(char *out, size_t n) {
    const char *env = getenv("KBV_PCH_DIR"), *ext = getenv("TORCH_EXTENSIONS_DIR");
    if (env && *env) return snprintf(out, n, "%s", env) < (int)n ? 0 : -1;
    if (!ext || !*ext || snprintf(out, n, "%s", ext) >= (int)n) return -1;
    char *slash = strrchr(out, '/');
    if (!slash || slash == out) return -1;
    *slash = '\0';
    return strlen(out) + 5 < n ? (strcat(out, "/pch"), 0) : -1;
}

int fastbuild_wanted(void) {
    const char *b = getenv("KBV_BUILD");
    return b && strcmp(b, "fast") == 0;
}

void fastbuild_install(void) {
    static int done;
    char root[4096];
    if (done || !fastbuild_wanted()) return;
    done = 1;
    if (pch_root(root, sizeof root) < 0) {
        fprintf(stderr, "kbv-worker: fast build off: no folder for precompiled headers\n");
        return;
    }
    PyObject *m = module();
    PyObject *r = m ? PyObject_CallMethod(m, "install", "s", root) : NULL;
    if (!r) {
        kbv_err err = {{0}};
        py_take_error(&err, NULL, NULL);
        fprintf(stderr, "kbv-worker: fast build off (stock load_inline): %s\n", err.msg);
        return;
    }
    Py_DECREF(r);
}

int fastbuild_make_pch(const char *root, const char *sets, kbv_err *err) {
    PyObject *m = module();
    PyObject *r = m ? PyObject_CallMethod(m, "make_sets", "ss", root, sets ? sets : ";-O3") : NULL;
    if (!r) {
        py_take_error(err, NULL, NULL);
        return -1;
    }
    Py_DECREF(r);
    fflush(NULL);
    return 0;
}
