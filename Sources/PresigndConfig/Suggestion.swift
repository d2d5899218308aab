/// "Did you mean" for unknown keys and names: the closest candidate by edit distance or shared prefix.
enum Suggestion {
    /// The best candidate within Levenshtein distance 2 (and less than the word's length), or sharing a
    /// prefix of at least 5 characters (`secret_key` → `secret_access_key`); nil if none is close.
    static func closest(to word: String, in candidates: [String]) -> String? {
        var best: (candidate: String, score: Int)?
        for candidate in candidates where candidate != word {
            let distance = levenshtein(word, candidate)
            let prefix = zip(word, candidate).prefix(while: { $0 == $1 }).count
            let isClose =
                (distance <= 2 && distance < word.count) || prefix >= 5
                || (prefix >= 3 && (candidate.hasPrefix(word) || word.hasPrefix(candidate)))
            guard isClose else { continue }
            if best == nil || distance < best!.score { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// `; did you mean 'x'?` or nothing.
    static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// Edit distance with insertions, deletions and substitutions, by characters.
    static func levenshtein(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
