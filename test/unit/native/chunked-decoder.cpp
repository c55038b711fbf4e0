// The chunked-body decoder of our uWS build (vendor/uws-patches/0006, uWebSockets/src/ChunkedEncoding.h) driven the
// way uWS's HttpParser drives it (ChunkIterator over each TCP read, the rest of a read after the body is the next
// request), on every split of each input: whole, cut at every byte, one byte per read. Compiled and run by
// chunked-decoder.test.ts. Prints one line per check, "ok <name>" or "FAIL <name>: <why>"; `random` adds 20,000
// random valid bodies (extensions, trailers, random cuts) and as many one-byte mutations (must not crash or hang).
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>
#include "ChunkedEncoding.h"

using namespace uWS;

struct Outcome {
    bool error = false;
    int fins = 0;
    std::string body, rest, why;
};

/* Feeds `in` in reads cut at `cuts` (ascending), as HttpParser does; stops feeding the decoder after the body's end. */
static Outcome feed(const std::string &in, std::vector<size_t> cuts) {
    Outcome o;
    uint64_t state = STATE_IS_CHUNKED;
    size_t from = 0;
    cuts.push_back(in.size());
    for (size_t to : cuts) {
        std::string read = in.substr(from, to - from);
        from = to;
        if (o.fins) {
            o.rest += read;
            continue;
        }
        std::string_view data(read);
        for (auto chunk : ChunkIterator(&data, &state)) {
            if (chunk.length() == 0) o.fins++;
            else if (o.fins) o.why = "data after the end";
            else o.body += chunk;
        }
        if (isParsingInvalidChunkedEncoding(state)) {
            o.error = true;
            return o;
        }
        if (o.fins) o.rest += std::string(data);
        else if (data.length()) o.why = "bytes left unread before the end";
    }
    return o;
}

static std::vector<std::vector<size_t>> everySplit(const std::string &in) {
    std::vector<std::vector<size_t>> all{{}};
    std::vector<size_t> perByte;
    for (size_t i = 1; i < in.size(); i++) {
        all.push_back({i});
        perByte.push_back(i);
    }
    all.push_back(perByte);
    return all;
}

/* At most 40 bytes of what was read, for a report line */
static std::string shown(const std::string &s) {
    return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

static int failures = 0;
static void report(const std::string &name, const std::string &why) {
    if (why.empty()) printf("ok %s\n", name.c_str());
    else printf("FAIL %s: %s\n", name.c_str(), why.c_str());
    failures += !why.empty();
}

static void accepts(const std::string &name, const std::string &in, const std::string &body, const std::string &rest) {
    for (auto &cuts : everySplit(in)) {
        Outcome o = feed(in, cuts);
        std::string at = cuts.empty() ? "whole" : cuts.size() == 1 ? "cut at " + std::to_string(cuts[0]) : "one byte per read";
        if (o.error) return report(name, "refused (" + at + ")");
        if (!o.why.empty()) return report(name, o.why + " (" + at + ")");
        if (o.fins != 1) return report(name, "the end seen " + std::to_string(o.fins) + " times (" + at + ")");
        if (o.body != body) return report(name, "body " + shown(o.body) + " (" + at + ")");
        if (o.rest != rest) return report(name, "next request " + shown(o.rest) + " (" + at + ")");
    }
    report(name, "");
}

static void refuses(const std::string &name, const std::string &in) {
    for (auto &cuts : everySplit(in)) {
        Outcome o = feed(in, cuts);
        if (!o.error || o.fins) return report(name, std::string(o.fins ? "the body ended" : "not refused") + (cuts.empty() ? " (whole)" : " (split)"));
    }
    report(name, "");
}

/* Not refused, not ended: the decoder waits for more (a slow client is the timer's business). */
static void waits(const std::string &name, const std::string &in) {
    Outcome o = feed(in, {});
    report(name, o.error ? "refused" : o.fins ? "ended" : "");
}

int main(int argc, char **argv) {
    const std::string N = "GET / HTTP/1.1\r\nhost: x\r\n\r\n";
    accepts("plain chunks, then the next request", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" + N, "hello world", N);
    accepts("hex digits in both cases, leading zeros", "A\r\n0123456789\r\n000a\r\n0123456789\r\n000\r\n\r\n", "01234567890123456789", "");
    accepts("an empty body", "0\r\n\r\n" + N, "", N);
    accepts("extension name=value", "5;name=value\r\nhello\r\n0\r\n\r\n", "hello", "");
    accepts("extension without a value, on the last chunk too", "5;name\r\nhello\r\n0;x\r\n\r\n", "hello", "");
    accepts("extensions with BWS", "5 ; a = b ;c\t;d=e\r\nhello\r\n0\r\n\r\n", "hello", "");
    accepts("quoted-string values with quoted-pairs", "1a;n=\"a value; with \\\"quotes\\\" \\\\ \xe9\"\r\nabcdefghijklmnopqrstuvwxyz\r\n0;l=\"\"\r\n\r\n", "abcdefghijklmnopqrstuvwxyz", "");
    accepts("a trailer section, then the next request", "5\r\nhello\r\n0\r\nX-Checksum: abc\r\nb-c:\r\nd:  x \xe9 \t\r\n\r\n" + N, "hello", N);
    accepts("extensions and a trailer section, two requests behind", "5;a=b\r\nhello\r\n0;last=\"yes\"\r\nX: y\r\n\r\n" + N + N, "hello", N + N);
    accepts("a size line of 4,096 bytes", "1;n=" + std::string(4092, 'v') + "\r\nq\r\n0\r\n\r\n", "q", "");
    accepts("4,095 leading zeros", std::string(4095, '0') + "5\r\nhello\r\n0\r\n\r\n", "hello", "");
    accepts("a trailer section of 4,096 bytes", "0\r\nx:" + std::string(4092, 'v') + "\r\n\r\n", "", "");
    refuses("a size line of 4,097 bytes", "1;n=" + std::string(4093, 'v') + "\r\nq\r\n0\r\n\r\n");
    refuses("4,096 leading zeros and a digit", std::string(4096, '0') + "5\r\nhello\r\n0\r\n\r\n");
    refuses("a trailer section of 4,097 bytes", "0\r\nx:" + std::string(4093, 'v') + "\r\n\r\n");
    refuses("an extension without ';'", "5 name=value\r\nhello\r\n0\r\n\r\n");
    refuses("junk right after the size", "5name\r\nhello\r\n0\r\n\r\n");
    refuses("whitespace then CRLF after the size", "5 \r\nhello\r\n0\r\n\r\n");
    refuses("whitespace then CRLF after an extension name", "5;a \r\nhello\r\n0\r\n\r\n");
    refuses("an empty extension name", "5;=x\r\nhello\r\n0\r\n\r\n");
    refuses("an empty extension value", "5;a=\r\nhello\r\n0\r\n\r\n");
    refuses("an unterminated quoted-string", "5;a=\"xy\r\nhello\r\n0\r\n\r\n");
    refuses("a control byte in an extension", "5;a=b\x01\r\nhello\r\n0\r\n\r\n");
    refuses("DEL in a quoted-string", "5;a=\"\x7f\"\r\nhello\r\n0\r\n\r\n");
    refuses("a bare LF ending the size line", "5\nhello\r\n0\r\n\r\n");
    refuses("a bare LF ending a line with an extension", "5;a=b\nhello\r\n0\r\n\r\n");
    refuses("a bare LF inside an extension name", "5;a\nb\r\nhello\r\n0\r\n\r\n");
    refuses("a bare LF inside a quoted-string", "5;a=\"x\ny\"\r\nhello\r\n0\r\n\r\n");
    refuses("a CR inside a quoted-string", "5;a=\"x\ry\"\r\nhello\r\n0\r\n\r\n");
    refuses("a bare CR after the size", "5\rhello\r\n0\r\n\r\n");
    refuses("no hex digit", ";a\r\nhello\r\n0\r\n\r\n");
    refuses("an empty size line", "\r\nhello\r\n0\r\n\r\n");
    refuses("a sign", "-5\r\nhello\r\n0\r\n\r\n");
    refuses("a 0x prefix", "0x5\r\nhello\r\n0\r\n\r\n");
    refuses("g is not a hex digit", "g\r\n");
    refuses("':' is not a hex digit", ":\r\nhello\r\n0\r\n\r\n");
    refuses("'@' is not a hex digit", "@\r\n");
    refuses("a size of 2^44", "100000000000\r\n");
    refuses("a size of 2^64 - 1", "ffffffffffffffff\r\n");
    waits("a size of 2^44 - 1 (waits for its data)", "fffffffffff\r\nabc");
    refuses("chunk data followed by two other bytes", "5\r\nhelloXX0\r\n\r\n");
    refuses("chunk data followed by a bare LF", "5\r\nhello\n0\r\n\r\n");
    refuses("chunk data longer than its size", "5\r\nhello!\r\n0\r\n\r\n");
    refuses("a trailer field without a colon", "0\r\nX\r\n\r\n");
    refuses("a space before a trailer field's colon", "0\r\nX : y\r\n\r\n");
    refuses("an obs-folded trailer line", "0\r\nX: y\r\n z\r\n\r\n");
    refuses("a NUL in a trailer value", std::string("0\r\nX: a\0b\r\n\r\n", 13));
    refuses("a control byte in a trailer value", "0\r\nX: \x01\r\n\r\n");
    refuses("DEL in a trailer value", "0\r\nX: \x7f\r\n\r\n");
    refuses("an empty trailer field name", "0\r\n: y\r\n\r\n");
    refuses("a trailer line ending in a bare LF", "0\r\nX: y\n\r\n");
    refuses("a bare LF after the trailer section", "0\r\nX: y\r\n\n");
    refuses("a bare LF as the final line", "0\r\n\n");
    refuses("a CR and junk as the final line", "0\r\n\rX");
    waits("the last chunk without the final CRLF", "5\r\nhello\r\n0\r\n");
    waits("a trailer field without the final CRLF", "0\r\nX: y\r\n");

    if (argc > 1 && std::string(argv[1]) == "random") {
        std::mt19937 rng(42);
        auto pick = [&](int n) { return (int) (rng() % (unsigned) n); };
        const char *tchars = "abcXYZ09!#$%&'*+-.^_`|~";
        auto token = [&]() { std::string t; for (int k = 0; k <= pick(4); k++) t += tchars[pick(23)]; return t; };
        auto extensions = [&]() {
            std::string e;
            for (int i = pick(3); i > 0; i--) {
                e += std::string(pick(2), ' ') + ";" + std::string(pick(2), '\t') + token();
                if (!pick(2)) continue;
                e += std::string(pick(2), ' ') + "=" + std::string(pick(2), ' ');
                if (pick(2)) { e += token(); continue; }
                e += "\"";
                for (int k = pick(5); k > 0; k--) e += std::vector<std::string>{"\\\"", ";", " ", "x", "\\\\", "\x80"}[pick(6)];
                e += "\"";
            }
            return e;
        };
        std::string why;
        for (int iter = 0; iter < 20000 && why.empty(); iter++) {
            std::string in, body;
            for (int i = pick(4); i > 0; i--) {
                int n = 1 + pick(40);
                std::string data;
                for (int k = 0; k < n; k++) data += (char) (rng() & 255);
                char size[32];
                snprintf(size, sizeof size, pick(2) ? "%x" : "%X", n);
                in += std::string(pick(2), '0') + size + extensions() + "\r\n" + data + "\r\n";
                body += data;
            }
            in += std::string(1 + pick(2), '0') + extensions() + "\r\n";
            for (int i = pick(3); i > 0; i--) {
                in += token() + ":";
                for (int k = pick(6); k > 0; k--) in += " x\t\x80"[pick(4)];
                in += "\r\n";
            }
            in += "\r\n";
            std::string rest = pick(2) ? N : "";
            std::vector<size_t> cuts;
            for (size_t i = 1; i < in.size() + rest.size(); i++) if (pick(4) == 0) cuts.push_back(i);
            Outcome o = feed(in + rest, cuts);
            if (o.error || o.fins != 1 || o.body != body || o.rest != rest || !o.why.empty()) why = "random body " + std::to_string(iter) + " misread";
            std::string mutated = in;
            mutated[rng() % mutated.size()] = (char) (rng() & 255);
            Outcome m = feed(mutated + rest, cuts);
            if (!m.error && m.fins != 1 && !m.why.empty()) why = "mutation " + std::to_string(iter) + ": " + m.why;
        }
        report("20,000 random bodies with extensions and trailers, random cuts; 20,000 one-byte mutations", why);
    }
    return failures ? 1 : 0;
}
