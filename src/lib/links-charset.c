/* links-charset.c - charset labels as browsers read them.
 *
 * A Content-Type's charset is a label, and browsers resolve labels with
 * the table of the WHATWG Encoding Standard (https://encoding.spec.whatwg.org/,
 * "Encodings"): 228 labels of 40 encodings, matched whole after ASCII
 * blanks are trimmed, in any case. A label that is not in it - IBM037,
 * UTF-32, UTF-7 - is ignored, and the page is read as if it had declared
 * nothing. iconv knows many such labels, so handing the label to libxml2
 * as it came would read an ASCII page labelled IBM037 as EBCDIC and find
 * no link at all where a browser finds them all. Several labels also name
 * another encoding than iconv gives them: "latin1", "ascii" and
 * "iso-8859-1" are windows-1252, "euc-kr" is windows-949, "shift_jis" is
 * windows-31j, "big5" is Big5-HKSCS, "utf-16" is UTF-16LE.
 *
 * So a label becomes the name of the iconv converter for the encoding it
 * names. The standard's "replacement" encoding (labels of ISO-2022-KR,
 * ISO-2022-CN and HZ, which a browser shows as one replacement character)
 * and x-user-defined have none here: their pages are read as undeclared,
 * which finds their ASCII links. */
#include <stdlib.h>
#include <string.h>

#include "links-internal.h"

struct label {
    const char *label; /* lower case */
    const char *conv;  /* iconv's name, or NULL: read as undeclared */
};

/* Sorted by label, bytewise, for bsearch(). */
static const struct label labels[] = {
    {"866", "IBM866"},
    {"ansi_x3.4-1968", "WINDOWS-1252"},
    {"arabic", "ISO-8859-6"},
    {"ascii", "WINDOWS-1252"},
    {"asmo-708", "ISO-8859-6"},
    {"big5", "BIG5-HKSCS"},
    {"big5-hkscs", "BIG5-HKSCS"},
    {"chinese", "GBK"},
    {"cn-big5", "BIG5-HKSCS"},
    {"cp1250", "WINDOWS-1250"},
    {"cp1251", "WINDOWS-1251"},
    {"cp1252", "WINDOWS-1252"},
    {"cp1253", "WINDOWS-1253"},
    {"cp1254", "WINDOWS-1254"},
    {"cp1255", "WINDOWS-1255"},
    {"cp1256", "WINDOWS-1256"},
    {"cp1257", "WINDOWS-1257"},
    {"cp1258", "WINDOWS-1258"},
    {"cp819", "WINDOWS-1252"},
    {"cp866", "IBM866"},
    {"csbig5", "BIG5-HKSCS"},
    {"cseuckr", "CP949"},
    {"cseucpkdfmtjapanese", "EUC-JP"},
    {"csgb2312", "GBK"},
    {"csibm866", "IBM866"},
    {"csiso2022jp", "ISO-2022-JP"},
    {"csiso2022kr", NULL},
    {"csiso58gb231280", "GBK"},
    {"csiso88596e", "ISO-8859-6"},
    {"csiso88596i", "ISO-8859-6"},
    {"csiso88598e", "ISO-8859-8"},
    {"csiso88598i", "ISO-8859-8"},
    {"csisolatin1", "WINDOWS-1252"},
    {"csisolatin2", "ISO-8859-2"},
    {"csisolatin3", "ISO-8859-3"},
    {"csisolatin4", "ISO-8859-4"},
    {"csisolatin5", "WINDOWS-1254"},
    {"csisolatin6", "ISO-8859-10"},
    {"csisolatin9", "ISO-8859-15"},
    {"csisolatinarabic", "ISO-8859-6"},
    {"csisolatincyrillic", "ISO-8859-5"},
    {"csisolatingreek", "ISO-8859-7"},
    {"csisolatinhebrew", "ISO-8859-8"},
    {"cskoi8r", "KOI8-R"},
    {"csksc56011987", "CP949"},
    {"csmacintosh", "MACINTOSH"},
    {"csshiftjis", "WINDOWS-31J"},
    {"csunicode", "UTF-16LE"},
    {"cyrillic", "ISO-8859-5"},
    {"dos-874", "WINDOWS-874"},
    {"ecma-114", "ISO-8859-6"},
    {"ecma-118", "ISO-8859-7"},
    {"elot_928", "ISO-8859-7"},
    {"euc-jp", "EUC-JP"},
    {"euc-kr", "CP949"},
    {"gb18030", "GB18030"},
    {"gb2312", "GBK"},
    {"gb_2312", "GBK"},
    {"gb_2312-80", "GBK"},
    {"gbk", "GBK"},
    {"greek", "ISO-8859-7"},
    {"greek8", "ISO-8859-7"},
    {"hebrew", "ISO-8859-8"},
    {"hz-gb-2312", NULL},
    {"ibm819", "WINDOWS-1252"},
    {"ibm866", "IBM866"},
    {"iso-10646-ucs-2", "UTF-16LE"},
    {"iso-2022-cn", NULL},
    {"iso-2022-cn-ext", NULL},
    {"iso-2022-jp", "ISO-2022-JP"},
    {"iso-2022-kr", NULL},
    {"iso-8859-1", "WINDOWS-1252"},
    {"iso-8859-10", "ISO-8859-10"},
    {"iso-8859-11", "WINDOWS-874"},
    {"iso-8859-13", "ISO-8859-13"},
    {"iso-8859-14", "ISO-8859-14"},
    {"iso-8859-15", "ISO-8859-15"},
    {"iso-8859-16", "ISO-8859-16"},
    {"iso-8859-2", "ISO-8859-2"},
    {"iso-8859-3", "ISO-8859-3"},
    {"iso-8859-4", "ISO-8859-4"},
    {"iso-8859-5", "ISO-8859-5"},
    {"iso-8859-6", "ISO-8859-6"},
    {"iso-8859-6-e", "ISO-8859-6"},
    {"iso-8859-6-i", "ISO-8859-6"},
    {"iso-8859-7", "ISO-8859-7"},
    {"iso-8859-8", "ISO-8859-8"},
    {"iso-8859-8-e", "ISO-8859-8"},
    {"iso-8859-8-i", "ISO-8859-8"},
    {"iso-8859-9", "WINDOWS-1254"},
    {"iso-ir-100", "WINDOWS-1252"},
    {"iso-ir-101", "ISO-8859-2"},
    {"iso-ir-109", "ISO-8859-3"},
    {"iso-ir-110", "ISO-8859-4"},
    {"iso-ir-126", "ISO-8859-7"},
    {"iso-ir-127", "ISO-8859-6"},
    {"iso-ir-138", "ISO-8859-8"},
    {"iso-ir-144", "ISO-8859-5"},
    {"iso-ir-148", "WINDOWS-1254"},
    {"iso-ir-149", "CP949"},
    {"iso-ir-157", "ISO-8859-10"},
    {"iso-ir-58", "GBK"},
    {"iso8859-1", "WINDOWS-1252"},
    {"iso8859-10", "ISO-8859-10"},
    {"iso8859-11", "WINDOWS-874"},
    {"iso8859-13", "ISO-8859-13"},
    {"iso8859-14", "ISO-8859-14"},
    {"iso8859-15", "ISO-8859-15"},
    {"iso8859-2", "ISO-8859-2"},
    {"iso8859-3", "ISO-8859-3"},
    {"iso8859-4", "ISO-8859-4"},
    {"iso8859-5", "ISO-8859-5"},
    {"iso8859-6", "ISO-8859-6"},
    {"iso8859-7", "ISO-8859-7"},
    {"iso8859-8", "ISO-8859-8"},
    {"iso8859-9", "WINDOWS-1254"},
    {"iso88591", "WINDOWS-1252"},
    {"iso885910", "ISO-8859-10"},
    {"iso885911", "WINDOWS-874"},
    {"iso885913", "ISO-8859-13"},
    {"iso885914", "ISO-8859-14"},
    {"iso885915", "ISO-8859-15"},
    {"iso88592", "ISO-8859-2"},
    {"iso88593", "ISO-8859-3"},
    {"iso88594", "ISO-8859-4"},
    {"iso88595", "ISO-8859-5"},
    {"iso88596", "ISO-8859-6"},
    {"iso88597", "ISO-8859-7"},
    {"iso88598", "ISO-8859-8"},
    {"iso88599", "WINDOWS-1254"},
    {"iso_8859-1", "WINDOWS-1252"},
    {"iso_8859-15", "ISO-8859-15"},
    {"iso_8859-1:1987", "WINDOWS-1252"},
    {"iso_8859-2", "ISO-8859-2"},
    {"iso_8859-2:1987", "ISO-8859-2"},
    {"iso_8859-3", "ISO-8859-3"},
    {"iso_8859-3:1988", "ISO-8859-3"},
    {"iso_8859-4", "ISO-8859-4"},
    {"iso_8859-4:1988", "ISO-8859-4"},
    {"iso_8859-5", "ISO-8859-5"},
    {"iso_8859-5:1988", "ISO-8859-5"},
    {"iso_8859-6", "ISO-8859-6"},
    {"iso_8859-6:1987", "ISO-8859-6"},
    {"iso_8859-7", "ISO-8859-7"},
    {"iso_8859-7:1987", "ISO-8859-7"},
    {"iso_8859-8", "ISO-8859-8"},
    {"iso_8859-8:1988", "ISO-8859-8"},
    {"iso_8859-9", "WINDOWS-1254"},
    {"iso_8859-9:1989", "WINDOWS-1254"},
    {"koi", "KOI8-R"},
    {"koi8", "KOI8-R"},
    {"koi8-r", "KOI8-R"},
    {"koi8-ru", "KOI8-RU"},
    {"koi8-u", "KOI8-RU"},
    {"koi8_r", "KOI8-R"},
    {"korean", "CP949"},
    {"ks_c_5601-1987", "CP949"},
    {"ks_c_5601-1989", "CP949"},
    {"ksc5601", "CP949"},
    {"ksc_5601", "CP949"},
    {"l1", "WINDOWS-1252"},
    {"l2", "ISO-8859-2"},
    {"l3", "ISO-8859-3"},
    {"l4", "ISO-8859-4"},
    {"l5", "WINDOWS-1254"},
    {"l6", "ISO-8859-10"},
    {"l9", "ISO-8859-15"},
    {"latin1", "WINDOWS-1252"},
    {"latin2", "ISO-8859-2"},
    {"latin3", "ISO-8859-3"},
    {"latin4", "ISO-8859-4"},
    {"latin5", "WINDOWS-1254"},
    {"latin6", "ISO-8859-10"},
    {"logical", "ISO-8859-8"},
    {"mac", "MACINTOSH"},
    {"macintosh", "MACINTOSH"},
    {"ms932", "WINDOWS-31J"},
    {"ms_kanji", "WINDOWS-31J"},
    {"replacement", NULL},
    {"shift-jis", "WINDOWS-31J"},
    {"shift_jis", "WINDOWS-31J"},
    {"sjis", "WINDOWS-31J"},
    {"sun_eu_greek", "ISO-8859-7"},
    {"tis-620", "WINDOWS-874"},
    {"ucs-2", "UTF-16LE"},
    {"unicode", "UTF-16LE"},
    {"unicode-1-1-utf-8", "UTF-8"},
    {"unicode11utf8", "UTF-8"},
    {"unicode20utf8", "UTF-8"},
    {"unicodefeff", "UTF-16LE"},
    {"unicodefffe", "UTF-16BE"},
    {"us-ascii", "WINDOWS-1252"},
    {"utf-16", "UTF-16LE"},
    {"utf-16be", "UTF-16BE"},
    {"utf-16le", "UTF-16LE"},
    {"utf-8", "UTF-8"},
    {"utf8", "UTF-8"},
    {"visual", "ISO-8859-8"},
    {"windows-1250", "WINDOWS-1250"},
    {"windows-1251", "WINDOWS-1251"},
    {"windows-1252", "WINDOWS-1252"},
    {"windows-1253", "WINDOWS-1253"},
    {"windows-1254", "WINDOWS-1254"},
    {"windows-1255", "WINDOWS-1255"},
    {"windows-1256", "WINDOWS-1256"},
    {"windows-1257", "WINDOWS-1257"},
    {"windows-1258", "WINDOWS-1258"},
    {"windows-31j", "WINDOWS-31J"},
    {"windows-874", "WINDOWS-874"},
    {"windows-949", "CP949"},
    {"x-cp1250", "WINDOWS-1250"},
    {"x-cp1251", "WINDOWS-1251"},
    {"x-cp1252", "WINDOWS-1252"},
    {"x-cp1253", "WINDOWS-1253"},
    {"x-cp1254", "WINDOWS-1254"},
    {"x-cp1255", "WINDOWS-1255"},
    {"x-cp1256", "WINDOWS-1256"},
    {"x-cp1257", "WINDOWS-1257"},
    {"x-cp1258", "WINDOWS-1258"},
    {"x-euc-jp", "EUC-JP"},
    {"x-gbk", "GBK"},
    {"x-mac-cyrillic", "MAC-CYRILLIC"},
    {"x-mac-roman", "MACINTOSH"},
    {"x-mac-ukrainian", "MAC-CYRILLIC"},
    {"x-sjis", "WINDOWS-31J"},
    {"x-unicode20utf8", "UTF-8"},
    {"x-user-defined", NULL},
    {"x-x-big5", "BIG5-HKSCS"},
};

/* The longest label is 19 bytes. */
#define LABEL_MAX 24

static int by_label(const void *key, const void *entry)
{
    return strcmp(key, ((const struct label *)entry)->label);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

const char *lx_charset_conv(const char *label)
{
    while (is_blank(*label))
        label++;
    size_t n = strlen(label);
    while (n > 0 && is_blank(label[n - 1]))
        n--;
    if (n == 0 || n >= LABEL_MAX)
        return NULL;
    char key[LABEL_MAX];
    for (size_t i = 0; i < n; i++)
        key[i] = label[i] >= 'A' && label[i] <= 'Z' ? (char)(label[i] - 'A' + 'a') : label[i];
    key[n] = '\0';
    const struct label *l =
        bsearch(key, labels, sizeof labels / sizeof *labels, sizeof *labels, by_label);
    return l ? l->conv : NULL;
}
