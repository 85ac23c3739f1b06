/* errnames LIBCUDA: prints, for every CUresult from 0 to 1099 that the
 * driver at LIBCUDA names, "code<TAB>cuGetErrorName<TAB>cuGetErrorString",
 * one line each. TestRealDriverErrorNames compares jetbake-cudaprobe's
 * table of names with NVIDIA's driver through it. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*name_fn)(int, const char **);

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: errnames /path/to/libcuda.so.1\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	name_fn get_name = (name_fn)dlsym(lib, "cuGetErrorName");
	name_fn get_string = (name_fn)dlsym(lib, "cuGetErrorString");
	if (!get_name || !get_string) {
		fprintf(stderr, "no cuGetErrorName or cuGetErrorString\n");
		return 1;
	}
	for (int code = 0; code < 1100; code++) {
		const char *name = NULL, *text = NULL;
		if (get_name(code, &name) != 0 || !name)
			continue;
		if (get_string(code, &text) != 0 || !text)
			text = "";
		printf("%d\t%s\t%s\n", code, name, text);
	}
	return 0;
}
