/* test_generate.c -- generate.c's pure parts: the code block taken from a model's answer
 * (generate_extract: the last complete fenced block that defines class ModelNew) and the
 * input-blind cut of a problem's source after its Model class (generate_cut_after_model). */
#include <stdlib.h>

#include "check.h"
#include "generate.h"

/* got (owned, may be NULL) equals want (NULL: no code) */
static void expect(const char *name, char *got, const char *want) {
    check_count++;
    if ((got || want) && (!got || !want || strcmp(got, want) != 0)) {
        check_failures++;
        fprintf(stderr, "test_generate: %s: got [%s], expected [%s]\n", name, got ? got : "(null)", want ? want : "(null)");
    }
    free(got);
}

int main(void) {
    expect("plain", generate_extract("hi\n```python\nclass ModelNew(nn.Module):\n    pass\n```\nbye"), "class ModelNew(nn.Module):\n    pass\n");
    expect("last of two", generate_extract("```python\nclass ModelNew:\n  a=1\n```\ntext\n```py\nclass ModelNew(M):\n  b=2\n```\n"), "class ModelNew(M):\n  b=2\n");
    expect("bare fence", generate_extract("```\nclass ModelNew(X): pass\n```"), "class ModelNew(X): pass\n");
    expect("cpp skipped", generate_extract("```python\nclass ModelNew(A): pass\n```\n```cpp\nclass ModelNew(B) {}\n```\n"), "class ModelNew(A): pass\n");
    expect("truncated last", generate_extract("```python\nclass ModelNew(A): pass\n```\n```python\nclass ModelNew(B):\n  x = 1\n"), "class ModelNew(A): pass\n");
    expect("no modelnew", generate_extract("```python\nclass Model(A): pass\n```\n"), NULL);
    expect("none", generate_extract("no code here"), NULL);
    expect("ModelNewer not", generate_extract("```python\nclass ModelNewer(A): pass\n```\n"), NULL);
    expect("comment not", generate_extract("```python\n# class ModelNew(A)\nx=1\n```\n"), NULL);
    expect("longer fence", generate_extract("````python\nclass ModelNew(A):\n  s='''\n```\n'''\n````\n"), "class ModelNew(A):\n  s='''\n```\n'''\n");
    expect("crlf", generate_extract("```python\r\nclass ModelNew(A): pass\r\n```\r\n"), "class ModelNew(A): pass\r\n");
    expect("Python caps", generate_extract("```Python\nclass ModelNew(A): pass\n```"), "class ModelNew(A): pass\n");
    expect("empty", generate_extract(""), NULL);
    const char *src = "import torch\nN = 3\n\nclass Model(nn.Module):\n    def f(self):\n\n        return 1\n# Test code\nbatch_size = 16\n\ndef get_inputs():\n    return [1]\n";
    expect("cut", generate_cut_after_model(src), "import torch\nN = 3\n\nclass Model(nn.Module):\n    def f(self):\n\n        return 1\n");
    expect("cut at end", generate_cut_after_model("class Model:\n    x = 1\n"), "class Model:\n    x = 1\n");
    expect("cut no model", generate_cut_after_model("class ModelX:\n  pass\n"), NULL);
    expect("cut no nl", generate_cut_after_model("class Model(A):\n    x = 1"), "class Model(A):\n    x = 1\n");
        CHECK_DONE("test_generate");
}
