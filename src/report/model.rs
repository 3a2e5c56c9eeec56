//! What a report shows, as plain data: the summary of a run, the configuration, and every
//! story with its members, how each joined, its text cut to what the views need and its
//! comparison with the representative. [`super::build`] makes it from a clustering;
//! [`super::page::render`] turns it into the page. Nothing here is escaped: every string is
//! as read.

use std::ops::Range;

/// Everything one report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportModel {
    /// The inputs, as named on the command line.
    pub inputs: Vec<String>,
    /// Where the stories come from.
    pub source: StorySource,
    /// Counts of the run.
    pub summary: Summary,
    /// The effective configuration, as TOML.
    pub configuration: String,
    /// What the comparisons count in: the shingle size and the candidate keys per text.
    pub grouping: Grouping,
    /// The Jaccard at which pairs join (`cluster.min-similarity`).
    pub(crate) join_similarity: f64,
    /// The Jaccard at which a lone document attaches (`cluster.attach-similarity`; 0: off).
    pub(crate) attach_similarity: f64,
    /// The names of the columns shown with each document: the time column first when one
    /// is read, then the others (see [`Member::columns`]).
    pub columns: Vec<String>,
    /// Stories, largest first.
    pub stories: Vec<Story>,
}

/// Where the stories of a report come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorySource {
    /// Clustered for this report: how each member joined is known.
    Clustered,
    /// Read from a clusters table (`cluster` output or `index export`), named here.
    Table(String),
    /// Read from a story index, named here.
    Index(String),
}

/// Counts of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Documents shown.
    pub documents: usize,
    /// Stories, single documents included.
    pub stories: usize,
    /// Stories of two or more documents.
    pub multi_stories: usize,
    /// Documents in stories of two or more.
    pub(crate) clustered_documents: usize,
    /// Documents too short to compare.
    pub too_short: usize,
    /// Records skipped while reading (malformed, duplicate id...).
    pub skipped: u64,
    /// Members linked to their representative by a verified pair.
    pub direct: usize,
    /// Members that joined through another member (verified pairs only).
    pub through: usize,
    /// Members attached on a weak link.
    pub weak: usize,
}

/// The candidate keys each text has, to read shared counts against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grouping {
    /// Words per shingle.
    pub shingle_size: usize,
    /// Minima per signature.
    pub minima: usize,
    /// Supershingles per text.
    pub supershingles: usize,
    /// Megashingles per text.
    pub megashingles: usize,
}

/// One story: its representative first, then the other members.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    /// Its id: the smallest document id, or the story's name in a table or an index.
    pub id: String,
    /// Documents the table or index gives the story, when more than are shown here (earlier
    /// nights of an index).
    pub(crate) known_size: Option<u64>,
    /// Its members, the representative first.
    pub members: Vec<Member>,
}

/// One document of a story.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Its id.
    pub id: String,
    /// Jaccard similarity to the representative, estimated from the minima (as `cluster`
    /// writes it); `None` when the document cannot be compared.
    pub similarity: Option<f64>,
    /// Too short to compare (fewer words than the shingle size).
    pub too_short: bool,
    /// Values of [`ReportModel::columns`], in that order.
    pub columns: Vec<String>,
    /// How it joined the story.
    pub join: Join,
    /// Its first words (see `crate::report::text::Shown::lead`).
    pub lead: String,
    /// The words kept after the lead, with the separator before each: empty for a story of
    /// one.
    pub rest: String,
    /// True when the text goes on after what is kept.
    pub cut: bool,
    /// Its comparison with the representative: `None` for the representative and for a text
    /// that cannot be compared.
    pub pair: Option<Pair>,
}

/// How a member joined its story.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Join {
    /// It is the representative.
    Representative,
    /// Linked: the first link on its way to the representative.
    Linked {
        /// The position in the story of the member at the other end: 0 (the representative)
        /// for a direct link.
        partner: usize,
        /// That link's Jaccard (or containment, for a verified pair that passed on it).
        score: f64,
        /// True for a weak link: a lone document attached to the story.
        weak: bool,
        /// Links between it and the representative.
        depth: u32,
    },
    /// Not known: the story comes from a table or an index.
    NotKnown,
}

impl Join {
    /// True for a member that joined through another member or on a weak link: what a reader
    /// should look at first.
    #[cfg(test)]
    pub(crate) fn is_loose(&self) -> bool {
        matches!(self, Join::Linked { partner, weak, .. } if *weak || *partner != 0)
    }
}

/// A member compared with its representative (see [`crate::compare::Comparison`]), and the
/// passages they share.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Exact Jaccard of the two shingle sets.
    pub jaccard: f64,
    /// Share of the smaller set inside the larger.
    pub containment: f64,
    /// Exact Dice.
    pub dice: f64,
    /// Shingles in common.
    pub common: usize,
    /// Distinct shingles of the member.
    pub(crate) member_shingles: usize,
    /// Distinct shingles of the representative.
    pub(crate) representative_shingles: usize,
    /// Jaccard estimated from the minima.
    pub estimated_jaccard: f64,
    /// Supershingles shared (of [`Grouping::supershingles`]).
    pub shared_supershingles: usize,
    /// Megashingles shared (of [`Grouping::megashingles`]).
    pub shared_megashingles: usize,
    /// Share of the member's lead found in the representative.
    pub(crate) member_lead_shared: f64,
    /// Share of the representative's lead found in the member.
    pub(crate) representative_lead_shared: f64,
    /// The member's shared passages, as ranges of its kept words (lead and rest).
    pub(crate) member_passages: Vec<Range<u32>>,
    /// The representative's passages shared with this member, as ranges of its kept words.
    pub(crate) representative_passages: Vec<Range<u32>>,
}

/// Bins of the similarity histogram: 0–0.05, ..., 0.95–1.
pub(crate) const HISTOGRAM_BINS: usize = 20;

impl ReportModel {
    /// How many members (representatives left out) fall in each twentieth of similarity to
    /// their representative.
    pub(crate) fn similarity_histogram(&self) -> [usize; HISTOGRAM_BINS] {
        let mut bins = [0; HISTOGRAM_BINS];
        let similarities = (self.stories.iter())
            .flat_map(|s| s.members.iter().skip(1))
            .filter_map(|m| m.similarity);
        for similarity in similarities {
            let bin = (similarity * HISTOGRAM_BINS as f64).floor() as usize;
            bins[bin.min(HISTOGRAM_BINS - 1)] += 1;
        }
        bins
    }
}

impl Story {
    /// The lowest similarity of a member to the representative, when any is known.
    pub(crate) fn lowest_similarity(&self) -> Option<f64> {
        (self.members.iter().skip(1))
            .filter_map(|m| m.similarity)
            .min_by(f64::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(similarity: Option<f64>) -> Member {
        Member {
            id: "d".into(),
            similarity,
            too_short: false,
            columns: Vec::new(),
            join: Join::NotKnown,
            lead: String::new(),
            rest: String::new(),
            cut: false,
            pair: None,
        }
    }

    #[test]
    fn the_histogram_counts_members_but_not_representatives() {
        let story = |similarities: &[Option<f64>]| Story {
            id: "s".into(),
            known_size: None,
            members: similarities.iter().map(|&s| member(s)).collect(),
        };
        let model = ReportModel {
            inputs: Vec::new(),
            source: StorySource::Clustered,
            summary: Summary::default(),
            configuration: String::new(),
            grouping: Grouping::default(),
            join_similarity: 0.35,
            attach_similarity: 0.2,
            columns: Vec::new(),
            stories: vec![
                story(&[Some(1.0), Some(1.0), Some(0.5), Some(0.04)]),
                story(&[Some(1.0)]),
                story(&[None, None]),
            ],
        };
        let bins = model.similarity_histogram();
        assert_eq!((bins[0], bins[10], bins[19]), (1, 1, 1));
        assert_eq!(bins.iter().sum::<usize>(), 3);
        assert_eq!(model.stories[0].lowest_similarity(), Some(0.04));
        assert_eq!(model.stories[1].lowest_similarity(), None);
    }

    #[test]
    fn a_member_is_loose_when_it_joined_through_another_or_weakly() {
        let link = |partner, weak| Join::Linked {
            partner,
            score: 0.5,
            weak,
            depth: 1,
        };
        assert!(!link(0, false).is_loose());
        assert!(link(2, false).is_loose());
        assert!(link(0, true).is_loose());
        assert!(!Join::NotKnown.is_loose() && !Join::Representative.is_loose());
    }
}
