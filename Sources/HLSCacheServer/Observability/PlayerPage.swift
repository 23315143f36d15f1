import Foundation
import HLSPlaylist
import ManifestURLs

/// `GET /play?src=/o/<scheme>/<host>/<path>` (forward mode): a page that plays a proxied stream with the browser's
/// own `<video>` element (native HLS in Safari and current Chromium), so that an operator can look at what the
/// cache serves. The status page links each busy stream to it. Its few lines of script (no library) show a playback
/// error on the page and report progress in `window.playerState`, which the browser tests read. Only hlscache's own proxy paths are played: the
/// page never points a browser anywhere else.
enum PlayerPage {
    /// The route's path.
    static let path = "/play"

    /// The player page's link for a stream, or `nil` when its URL carries a secret (a query token, userinfo),
    /// which the status page never shows.
    static func link(forStream url: String) -> String? {
        guard SecretRedaction.redact(url) == url, let proxied = ProxyURL.make(origin: url) else { return nil }
        return path + "?src=" + proxied.addingPercentEncoding(withAllowedCharacters: queryValueCharacters)!
    }

    /// The page for a request target (`/play?src=…`), or `nil` when `src` is missing, not a proxy path, or holds
    /// a secret (a query value, userinfo), which no page of hlscache shows.
    static func render(target: String) -> String? {
        guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first,
            let source = FormValue.value("src", in: String(query)),
            source.hasPrefix(ProxyURL.pathPrefix), ProxyURL.origin(fromPath: source) != nil,
            SecretRedaction.redact(source) == source,
            !source.contains(where: { $0.isNewline })
        else { return nil }
        let shown = StatusPage.escape(SecretRedaction.redact(ProxyURL.origin(fromPath: source) ?? source))
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>hlscache: \(shown)</title>
            <style>body{font-family:system-ui,sans-serif;margin:2em}video{width:100%;max-width:60em;background:#000}</style>
            </head><body>
            <h1>\(shown)</h1>
            <video id="player" src="\(StatusPage.escape(source))" controls autoplay muted playsinline></video>
            <p id="state">Played by this browser's own HLS support (Safari, current Chromium).</p>
            <p><a href="/">Status</a></p>
            <script>
            const video = document.getElementById("player"), shown = document.getElementById("state");
            window.playerState = { mode: "native", time: 0, error: null, ended: false };
            const report = (error) => { playerState.error = error; shown.textContent = error; };
            if (!video.canPlayType("application/vnd.apple.mpegurl")) report("this browser has no native HLS player");
            video.addEventListener("timeupdate", () => { playerState.time = video.currentTime; });
            video.addEventListener("ended", () => { playerState.ended = true; });
            video.addEventListener("error", () => report("media error " + video.error.code + ": " + video.error.message));
            </script>
            </body></html>

            """
    }

    /// What may stay unescaped in a query value.
    private static let queryValueCharacters: CharacterSet = {
        var characters = CharacterSet.urlQueryAllowed
        characters.remove(charactersIn: "&=+#?")
        return characters
    }()
}
