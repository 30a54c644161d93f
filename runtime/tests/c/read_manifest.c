/* For each file named on the command line: what cute_manifest_read_file says about it, one line
   each: `STATUS_NAME manifest|null` and, on failure, `: cute_last_error()`. No GPU needed. */
#include <stdio.h>

#include "cute_runtime.h"

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        char* text = NULL;
        int status = cute_manifest_read_file(argv[i], &text);
        printf("%s %s", cute_status_name(status), text ? "manifest" : "null");
        if (status != CUTE_OK) printf(": %s", cute_last_error());
        printf("\n");
        cute_string_free(text);
    }
    return 0;
}
