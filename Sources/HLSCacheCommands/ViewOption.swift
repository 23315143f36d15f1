import ArgumentParser
import ManifestURLs

/// A manifest view given as an option (`serve --manifest-filter`, `rewrite --view`, `prefetch --view`): only
/// `hlscache.*` parameters, and no delay, start or end (those need a viewer and the server's live history).
enum ViewOption {
    /// The view `text` names.
    /// - Parameters:
    ///   - option: the option's spelling, for messages.
    ///   - timeline: what to say of a delay, start or end.
    /// - Throws: `ValidationError` naming the option and what is wrong.
    static func parse(_ text: String, option: String, timeline: String) throws -> ManifestView {
        let view: ManifestView
        do throws(ManifestViewError) {
            view = try ManifestView(parameters: text)
        } catch {
            throw ValidationError("\(option): \(error.message)")
        }
        guard view.delaySeconds == nil, view.start == nil, view.end == nil else {
            throw ValidationError("\(option): \(timeline)")
        }
        return view
    }
}
