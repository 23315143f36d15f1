// Small wrappers over libxml2 for the DASHManifest target, the only one that includes this header.
//
// Everything here is `static inline`: a system-library target has no compiled sources. Parsing is safe by
// construction: no network (XML_PARSE_NONET), no entity substitution (no XML_PARSE_NOENT), no DTD loading or
// validation, libxml2's default depth and size limits (no XML_PARSE_HUGE), and no error printed to stderr.
#ifndef HLSCACHE_CLIBXML2_SHIM_H
#define HLSCACHE_CLIBXML2_SHIM_H

#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, and then <libxml/encoding.h> includes the system ICU's headers, whose enums
// clash with the ICU that Foundation bundles (_FoundationICU) in any Swift module that sees both: a clean build
// fails. Nothing here uses libxml2's ICU converters; the only thing the flag adds to the headers is two pointer
// fields at the end of xmlCharEncodingHandler, a struct this shim and DASHManifest only ever hold a pointer to.
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlmemory.h>
#include <string.h>

/// Swallows libxml2's generic error messages, which it would otherwise print to stderr (encoding errors among
/// them) whatever the parser options: the reason of a failed parse is read from the parser context instead.
static void hlscache_xml_silent(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

/// Parses a document from memory. On failure returns NULL and writes a one-line reason (truncated to
/// `reason_capacity`) and its line number.
static inline xmlDocPtr hlscache_xml_parse(const char *bytes, int length, const char *url, char *reason,
                                           int reason_capacity, int *line) {
    *line = 0;
    if (reason_capacity > 0) reason[0] = 0;
    // Per thread in libxml2: set on every parse, from whichever thread parses.
    xmlSetGenericErrorFunc(NULL, hlscache_xml_silent);
    xmlParserCtxtPtr context = xmlNewParserCtxt();
    if (context == NULL) {
        if (reason_capacity > 0) strncpy(reason, "out of memory", (size_t)reason_capacity - 1);
        return NULL;
    }
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    // UTF-8 whatever the document says (a byte-order mark, an encoding declaration): the byte scans made before
    // parsing (the document type, the element and attribute counts) read UTF-8, and a document in UTF-16 would pass
    // them unread.
    xmlDocPtr document = xmlCtxtReadMemory(context, bytes, length, url, "UTF-8", options);
    if (document == NULL || !context->wellFormed) {
        xmlErrorPtr error = xmlCtxtGetLastError(context);
        if (error != NULL && error->message != NULL && reason_capacity > 0) {
            strncpy(reason, error->message, (size_t)reason_capacity - 1);
            reason[reason_capacity - 1] = 0;
            size_t used = strlen(reason);
            while (used > 0 && (reason[used - 1] == '\n' || reason[used - 1] == ' ')) reason[--used] = 0;
            *line = error->line;
        }
        if (document != NULL) xmlFreeDoc(document);
        document = NULL;
    }
    xmlFreeParserCtxt(context);
    return document;
}

/// Frees memory libxml2 allocated (`xmlFree` may be a macro).
static inline void hlscache_xml_free(void *pointer) { xmlFree(pointer); }

/// Serializes a document (with its XML declaration) into memory the caller frees with `hlscache_xml_free`.
static inline xmlChar *hlscache_xml_dump(xmlDocPtr document, int *length) {
    xmlChar *memory = NULL;
    xmlDocDumpMemoryEnc(document, &memory, length, "UTF-8");
    return memory;
}

#endif
