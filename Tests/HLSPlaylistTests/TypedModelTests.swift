import ByteRanges
import HLSCacheTestTraits
import HLSPlaylist
import Testing

@Suite("Typed model", .sharedMachine)
struct TypedModelTests {
    static let media = """
        #EXTM3U
        #EXT-X-VERSION:9
        #EXT-X-TARGETDURATION:4
        #EXT-X-MEDIA-SEQUENCE:100
        #EXT-X-DISCONTINUITY-SEQUENCE:3
        #EXT-X-PLAYLIST-TYPE:EVENT
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-START:TIME-OFFSET=-12.5,PRECISE=YES
        #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.0,CAN-SKIP-UNTIL=24
        #EXT-X-PART-INF:PART-TARGET=0.33334
        #EXT-X-DEFINE:NAME="host",VALUE="cdn"
        #EXT-X-MAP:URI="init.mp4",BYTERANGE="800@0"
        #EXT-X-KEY:METHOD=AES-128,URI="k.key",IV=0x000102
        #EXT-X-PROGRAM-DATE-TIME:2026-11-21T00:00:00.000Z
        #EXT-X-BITRATE:1500
        #EXTINF:4.004,title
        #EXT-X-BYTERANGE:1000@800
        main.mp4
        #EXT-X-DISCONTINUITY
        #EXT-X-GAP
        #EXTINF:4,
        #EXT-X-BYTERANGE:500
        main.mp4
        #EXT-X-DATERANGE:ID="ad",CLASS="com.apple.hls.interstitial",START-DATE="2026-11-21T00:00:04Z",X-ASSET-URI="ad.m3u8"
        #EXT-X-PART:DURATION=0.33334,URI="p1.mp4",INDEPENDENT=YES
        #EXT-X-PRELOAD-HINT:TYPE=PART,URI="p2.mp4",BYTERANGE-START=0
        #EXT-X-RENDITION-REPORT:URI="../a/x.m3u8",LAST-MSN=101,LAST-PART=2
        #EXT-X-SKIP:SKIPPED-SEGMENTS=3
        #EXT-X-I-FRAMES-ONLY
        #EXT-X-ENDLIST
        #EXT-X-SOMETHING-NEW:FOO=1
        # a comment
        """

    @Test("every tag of a media playlist is typed")
    func mediaTagsAreTyped() throws {
        let playlist = try Playlist(parsing: Self.media)
        let tags = playlist.tags.map(\.tag)
        #expect(tags.contains(.version(9)))
        #expect(tags.contains(.targetDuration(4)))
        #expect(tags.contains(.mediaSequence(100)))
        #expect(tags.contains(.discontinuitySequence(3)))
        #expect(tags.contains(.playlistType(.event)))
        #expect(tags.contains(.independentSegments))
        #expect(tags.contains(.programDateTime("2026-11-21T00:00:00.000Z")))
        #expect(tags.contains(.bitrate(1500)))
        #expect(tags.contains(.byteRange(PlaylistByteRange(length: 500, offset: nil))))
        #expect(tags.contains(.discontinuity) && tags.contains(.gap) && tags.contains(.endList))
        #expect(tags.contains(.iFramesOnly))
        #expect(tags.contains(.define(VariableDefinition(name: "host", source: .value("cdn")))))
        #expect(tags.contains(.unknown(name: "EXT-X-SOMETHING-NEW", value: "FOO=1")))
        for tag in tags {
            if case .malformed = tag { Issue.record("malformed: \(tag)") }
        }
        var seen: Set<String> = []
        for tag in tags {
            switch tag {
            case .start(let start): #expect(start.timeOffset == -12.5 && start.precise); seen.insert("start")
            case .serverControl(let control):
                #expect(control.canBlockReload && control.partHoldBack == 1.0 && control.canSkipUntil == 24)
                seen.insert("server-control")
            case .partInf(let info): #expect(info.partTarget == 0.33334); seen.insert("part-inf")
            case .map(let map): #expect(map.byteRange == PlaylistByteRange(length: 800, offset: 0)); seen.insert("map")
            case .key(let key): #expect(key.method == "AES-128" && key.iv == [0, 1, 2]); seen.insert("key")
            case .dateRange(let range):
                #expect(range.assetURI == "ad.m3u8" && range.id == "ad"); seen.insert("daterange")
            case .part(let part): #expect(part.independent && part.uri == "p1.mp4"); seen.insert("part")
            case .preloadHint(let hint): #expect(hint.type == "PART" && hint.byteRangeStart == 0); seen.insert("hint")
            case .renditionReport(let report): #expect(report.lastMediaSequence == 101); seen.insert("report")
            case .skip(let skip): #expect(skip.skippedSegments == 3); seen.insert("skip")
            case .segmentInfo(let info): if info.title == "title" { seen.insert("extinf") }
            default: break
            }
        }
        #expect(seen.count == 11)
        #expect(playlist.kind == .media && !playlist.isLive && playlist.targetDuration == 4)
    }

    @Test("segments carry sequence numbers, explicit byte ranges, keys and maps")
    func segmentsAreDerived() throws {
        let segments = try Playlist(parsing: Self.media).segments
        #expect(segments.count == 2)
        #expect(segments[0].sequenceNumber == 100 && segments[1].sequenceNumber == 101)
        #expect(segments[0].byteRange == ByteRange(offset: 800, length: 1000))
        #expect(segments[1].byteRange == ByteRange(offset: 1800, length: 500))
        #expect(segments[1].discontinuity && segments[1].isGap && segments[1].key?.uri == "k.key")
        #expect(segments[0].map?.uri == "init.mp4")
    }

    @Test("every tag of a multivariant playlist is typed")
    func multivariantTagsAreTyped() throws {
        let playlist = try Playlist(
            parsing: """
                #EXTM3U
                #EXT-X-CONTENT-STEERING:SERVER-URI="/steer",PATHWAY-ID="A"
                #EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="x"
                #EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://k",KEYFORMAT="com.apple.streamingkeydelivery"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",URI="a/en.m3u8"
                #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=80000,URI="iframe.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=1280000,AVERAGE-BANDWIDTH=1000000,RESOLUTION=1280x720,FRAME-RATE=29.97,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aud"
                v720.m3u8
                """)
        #expect(playlist.kind == .multivariant)
        let variants = playlist.variantStreams
        #expect(variants.count == 1 && variants[0].uri == "v720.m3u8")
        #expect(variants[0].streamInf.resolution == Resolution(width: 1280, height: 720))
        #expect(variants[0].streamInf.codecs == "avc1.4d401f,mp4a.40.2" && variants[0].streamInf.audio == "aud")
        #expect(playlist.renditions.first?.isDefault == true && playlist.renditions.first?.language == "en")
        var kinds = 0
        for (_, tag) in playlist.tags {
            switch tag {
            case .contentSteering(let steering): #expect(steering.serverURI == "/steer"); kinds += 1
            case .sessionData(let data): #expect(data.value == "x"); kinds += 1
            case .sessionKey(let key): #expect(key.uri == "skd://k"); kinds += 1
            case .iFrameStreamInf(let stream): #expect(stream.uri == "iframe.m3u8"); kinds += 1
            default: break
            }
        }
        #expect(kinds == 4)
    }
}
