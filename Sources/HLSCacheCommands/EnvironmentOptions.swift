import Foundation

/// An option that an environment variable `HLSCACHE_<NAME>` can set when the command line does not.
enum EnvironmentOption: Sendable, Hashable {
    /// `--name VALUE`.
    case value(String)
    /// `--name VALUE`, repeatable: the variable holds a comma-separated list.
    case repeated(String)
    /// `--name`, set when the variable is `1`, `true` or `yes`.
    case flag(String)
    /// `--name VALUE`, repeatable: the variable holds one value per line (values that may contain commas).
    case lines(String)

    /// The option's long name, without dashes.
    var name: String {
        switch self {
        case .value(let name), .repeated(let name), .flag(let name), .lines(let name): name
        }
    }

    /// The environment variable: `HLSCACHE_` and the name in upper case, dashes as underscores.
    var variable: String {
        "HLSCACHE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Adds to `arguments` the options of `options` that `environment` sets and `arguments` does not.
    /// - Parameters:
    ///   - arguments: the subcommand's arguments, as given.
    ///   - options: the options environment variables may set.
    ///   - environment: the process environment.
    /// - Returns: `arguments` followed by the options taken from the environment.
    static func merged(_ arguments: [String], options: [EnvironmentOption], environment: [String: String]) -> [String] {
        var merged = arguments
        for option in options {
            let flag = "--" + option.name
            guard !arguments.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }),
                let value = environment[option.variable]
            else { continue }
            switch option {
            case .value:
                merged += [flag, value]
            case .repeated:
                for item in value.split(separator: ",") {
                    merged += [flag, item.trimmingCharacters(in: .whitespaces)]
                }
            case .lines:
                for item in value.split(separator: "\n") where !item.allSatisfy(\.isWhitespace) {
                    merged += [flag, String(item)]
                }
            case .flag:
                if ["1", "true", "yes", "on"].contains(value.lowercased()) { merged.append(flag) }
            }
        }
        return merged
    }
}
