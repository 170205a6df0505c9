/*
 * archive.c -- the FMU file: a zip (libzip) holding modelDescription.xml and
 * the binary twice, binaries/linux64/<modelIdentifier>.so (the folder
 * FMI 2.0 importers look in) and binaries/x86_64-linux/<modelIdentifier>.so
 * (the platform name of FMI 3.0 and of our issue's layout); written to the path given: the
 * driver gives a temporary name beside the target and renames it when
 * complete (compiler/driver/outfile.c), so a failed export never leaves a
 * half-written FMU under the requested name.
 */
#include <string.h>
#include <zip.h>

#include "fmi.h"

static int zip_failed(zip_t *z, const char *path, const char *what)
{
    diag_error((Span){0}, "cannot write '%s': %s: %s", path, what, z ? zip_strerror(z) : "");
    if (z)
        zip_discard(z);
    return 1;
}

int fmi_archive(const char *fmu_path, const char *xml, size_t xml_len, const char *so_path,
                const FmiExport *x)
{
    char entry[512];
    remove(fmu_path);          /* a fresh archive (the caller's temporary name) */
    int err = 0;
    zip_t *z = zip_open(fmu_path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z) {
        diag_error((Span){0}, "cannot create '%s' (libzip error %d)", fmu_path, err);
        return 1;
    }
    zip_source_t *md = zip_source_buffer(z, xml, xml_len, 0);
    if (!md || zip_file_add(z, "modelDescription.xml", md, ZIP_FL_ENC_UTF_8) < 0) {
        zip_source_free(md);
        return zip_failed(z, fmu_path, "modelDescription.xml");
    }
    static const char *const platforms[] = {"linux64", "x86_64-linux"};
    for (int k = 0; k < 2; k++) {
        snprintf(entry, sizeof entry, "binaries/%s/%s.so", platforms[k], x->model_identifier);
        zip_source_t *so = zip_source_file(z, so_path, 0, 0)  /* 0: to the end */;
        if (!so || zip_file_add(z, entry, so, ZIP_FL_ENC_UTF_8) < 0) {
            zip_source_free(so);
            return zip_failed(z, fmu_path, entry);
        }
    }
    if (zip_close(z) < 0)
        return zip_failed(z, fmu_path, "closing the archive");
    return 0;
}
