//! An HTML page as the tokenizer of the WHATWG HTML standard reads it (`html5gum`), given to a
//! [`Sink`] as text (character references decoded), start tags, end tags and breaks. The
//! tokenizer's states are switched as a browser's tree builder switches them: the text of
//! `<title>` and `<textarea>` is RCDATA, that of `<script>` script data, that of `<style>`,
//! `<iframe>`, `<noscript>`, `<noembed>`, `<noframes>` and `<xmp>` raw text, and all that
//! follows `<plaintext>` is text; inside `<svg>` and `<math>` (foreign content) none of them
//! switch, and `<![CDATA[...]]>` is text. Elements whose content is never page text (the
//! parent module's `HIDDEN_ELEMENTS`) reach the sink as one break, their content dropped.
//!
//! What the sink holds is bounded whatever the page: text reaches it in pieces of at most
//! [`TEXT_PIECE_BYTES`] (and a little more), never as one piece the length of the page, and a
//! sink that says it is full ([`Sink::is_full`]) has its output taken before more is read: the
//! reader [`Pause`]s the tokenizer at its next read of a run of text, where reading resumes as
//! if it had not stopped.

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;

use html5gum::{Emitter, Error, Readable, Reader, State, StringReader, Tokenizer};

use super::{is_one_of, HIDDEN_ELEMENTS};

/// The most bytes of text read at a time, and gathered before they go to the sink.
pub(super) const TEXT_PIECE_BYTES: usize = 64 << 10;

/// What a page's tokens are given to.
pub(super) trait Sink {
    /// What the tokenizer yields as an iterator: a piece of output ready to be taken.
    type Chunk;

    /// Text between tags, character references decoded. A text node may come in pieces.
    fn text(&mut self, text: &str);
    /// A start tag (never one of a hidden element).
    fn start_tag(&mut self, tag: &StartTag<'_>);
    /// An end tag.
    fn end_tag(&mut self, name: &str);
    /// A comment, a doctype, a processing instruction or a hidden element with its content.
    fn other(&mut self);
    /// Whether a start tag's attribute of this name (lowercase) is read.
    fn wants_attribute(&self, _name: &[u8]) -> bool {
        false
    }
    /// Whether the output ready to be taken is enough to be taken now, before more is read.
    fn is_full(&self) -> bool {
        false
    }
    /// Output ready to be taken, if any; at the end of the page (after [`Sink::end`]) all
    /// that is left.
    fn take_chunk(&mut self) -> Option<Self::Chunk> {
        None
    }
    /// The page has ended.
    fn end(&mut self) {}
}

/// A start tag as the sink sees it.
pub(super) struct StartTag<'t> {
    /// The element's name, lowercase.
    pub name: &'t str,
    /// Written `<name ... />`.
    pub(crate) self_closing: bool,
    /// The attributes the sink wants ([`Sink::wants_attribute`]): name and value, the first
    /// of each name only, as the standard keeps them.
    attributes: &'t [(Vec<u8>, Vec<u8>)],
}

impl StartTag<'_> {
    /// The wanted attributes: name (lowercase) and value, character references decoded.
    pub fn attributes(&self) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
        self.attributes.iter().map(|(name, value)| {
            (
                String::from_utf8_lossy(name),
                String::from_utf8_lossy(value),
            )
        })
    }
}

/// The tokenizer over `html` whose tokens go to `sink`; as an iterator it yields the chunks
/// the sink gives ([`Sink::take_chunk`]), and a [`Pause`] (to be passed over) when the sink is
/// full.
pub(super) fn tokenize<S: Sink>(html: &str, sink: S) -> Tokens<'_, S> {
    let pause = Rc::new(Cell::new(false));
    let reader = CappedReader {
        bytes: html.as_bytes(),
        pause: Rc::clone(&pause),
    };
    Tokenizer::new_with_emitter(reader, TokenEmitter::new(sink, pause))
}

/// The tokenizer stopped so that a full sink's output can be taken; iterating on resumes it.
#[derive(Debug)]
pub(super) struct Pause;

impl std::fmt::Display for Pause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the tokenizer paused for its output to be taken")
    }
}

impl std::error::Error for Pause {}

/// The tokenizer of [`tokenize`].
pub(super) type Tokens<'a, S> = Tokenizer<CappedReader<'a>, TokenEmitter<S>>;

/// The page's bytes, read as `html5gum`'s own reader of a string reads them, but at most
/// [`TEXT_PIECE_BYTES`] at a time: a page that is one long text is given in pieces. When the
/// emitter asks for a pause, the next read of a run of text ([`is_text_run`]) fails with
/// [`Pause`] instead: the text states (data, RCDATA, raw text, script data, plaintext) read
/// runs in a loop that keeps nothing of its own, and are always entered with the tokenizer's
/// state set to them, so calling the tokenizer again goes on where it stopped. (The states of
/// tags and attributes are entered without it, and are never paused in.)
pub(super) struct CappedReader<'a> {
    bytes: &'a [u8],
    pause: Rc<Cell<bool>>,
}

impl Reader for CappedReader<'_> {
    type Error = Pause;

    fn read_byte(&mut self) -> Result<Option<u8>, Pause> {
        let Some((&first, rest)) = self.bytes.split_first() else {
            return Ok(None);
        };
        self.bytes = rest;
        Ok(Some(first))
    }

    fn try_read_string(&mut self, s: &[u8], case_sensitive: bool) -> Result<bool, Pause> {
        let found = self
            .bytes
            .get(..s.len())
            .is_some_and(|next| next == s || (!case_sensitive && next.eq_ignore_ascii_case(s)));
        if found {
            self.bytes = &self.bytes[s.len()..];
        }
        Ok(found)
    }

    fn read_until<'b>(
        &'b mut self,
        needle: &[u8],
        char_buf: &'b mut [u8; 4],
    ) -> Result<Option<&'b [u8]>, Pause> {
        if self.pause.get() && is_text_run(needle) {
            self.pause.set(false);
            return Err(Pause);
        }
        let window = &self.bytes[..self.bytes.len().min(TEXT_PIECE_BYTES)];
        let mut reader: StringReader<'_> = window.to_reader();
        let read = match reader.read_until(needle, char_buf) {
            Ok(Some(read)) => read.len(),
            Ok(None) => return Ok(None),
            Err(never) => match never {},
        };
        let (read, rest) = self.bytes.split_at(read);
        self.bytes = rest;
        Ok(Some(read))
    }
}

/// Whether `html5gum` reads a run with this needle in a text state only: data and RCDATA stop
/// at `&`, `<`, NUL and CR, raw text and script data at `<`, NUL and CR, plaintext at NUL and
/// CR. Every other state's needle holds another byte (`-` for comments and escaped script,
/// `>`, quotes, whitespace, `]`).
fn is_text_run(needle: &[u8]) -> bool {
    needle
        .iter()
        .all(|b| matches!(b, b'&' | b'<' | b'\0' | b'\r'))
}

/// Which kind of tag is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TagKind {
    Start,
    End,
}

/// Where the value of the attribute being read goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AttributeSlot {
    /// Not decided yet: its name is still being read.
    Undecided,
    /// Not wanted, or a repeated name.
    Dropped,
    /// This entry of the wanted attributes.
    Kept(usize),
}

/// The element whose content is being dropped.
struct Hidden {
    name: Vec<u8>,
    /// Elements of the same name open inside it, itself included.
    depth: usize,
}

/// `html5gum`'s emitter: gathers the current token and gives it to the sink.
pub(super) struct TokenEmitter<S> {
    sink: S,
    /// Text read and not yet given to the sink.
    text: Vec<u8>,
    kind: TagKind,
    tag_name: Vec<u8>,
    self_closing: bool,
    /// The last start tag's name, for the end of RCDATA, raw text and script data.
    last_start_tag: Vec<u8>,
    attribute_name: Vec<u8>,
    slot: AttributeSlot,
    /// The wanted attributes of the current tag: the first `kept` entries (the rest are
    /// buffers kept for reuse).
    attributes: Vec<(Vec<u8>, Vec<u8>)>,
    kept: usize,
    hidden: Option<Hidden>,
    /// Open `<svg>` and `<math>` elements: foreign content.
    foreign: usize,
    /// Set when the sink is full: the reader pauses at its next run.
    pause: Rc<Cell<bool>>,
}

impl<S: Sink> TokenEmitter<S> {
    fn new(sink: S, pause: Rc<Cell<bool>>) -> Self {
        TokenEmitter {
            sink,
            text: Vec::new(),
            kind: TagKind::Start,
            tag_name: Vec::new(),
            self_closing: false,
            last_start_tag: Vec::new(),
            attribute_name: Vec::new(),
            slot: AttributeSlot::Dropped,
            attributes: Vec::new(),
            kept: 0,
            hidden: None,
            foreign: 0,
            pause,
        }
    }

    /// Gives the text read so far to the sink; with `whole` unset, only when there is
    /// [`TEXT_PIECE_BYTES`] of it, and only up to its last whole character.
    fn flush_text(&mut self, whole: bool) {
        if self.text.is_empty() || (!whole && self.text.len() < TEXT_PIECE_BYTES) {
            return;
        }
        match simdutf8::basic::from_utf8(&self.text) {
            Ok(text) => {
                self.sink.text(text);
                self.text.clear();
            }
            Err(_) => self.flush_cut_text(whole),
        }
        if self.sink.is_full() {
            self.pause.set(true);
        }
    }

    /// [`TokenEmitter::flush_text`] of text that is not whole UTF-8: a character cut at the
    /// end is kept for what follows unless `whole` is set; anything else is replaced.
    #[cold]
    fn flush_cut_text(&mut self, whole: bool) {
        match std::str::from_utf8(&self.text) {
            Ok(text) => {
                self.sink.text(text);
                self.text.clear();
            }
            Err(error) => {
                let end = match error.error_len() {
                    // A character cut at the end: it is given with what follows.
                    None if !whole => error.valid_up_to(),
                    _ => self.text.len(),
                };
                self.sink.text(&String::from_utf8_lossy(&self.text[..end]));
                self.text.drain(..end);
            }
        }
    }

    /// Ends the attribute being read: one named but given no value is kept with an empty one.
    fn end_attribute(&mut self) {
        if self.slot == AttributeSlot::Undecided {
            self.decide_slot();
        }
        self.slot = AttributeSlot::Dropped;
    }

    /// Decides whether the attribute being read is kept, now that its name is read.
    fn decide_slot(&mut self) {
        let name = &self.attribute_name;
        let repeated = self.attributes[..self.kept].iter().any(|(n, _)| n == name);
        if self.kind == TagKind::End || repeated || !self.sink.wants_attribute(name) {
            self.slot = AttributeSlot::Dropped;
            return;
        }
        if self.kept == self.attributes.len() {
            self.attributes.push(Default::default());
        }
        let (kept_name, value) = &mut self.attributes[self.kept];
        kept_name.clear();
        kept_name.extend_from_slice(name);
        value.clear();
        self.slot = AttributeSlot::Kept(self.kept);
        self.kept += 1;
    }

    /// The tokenizer's state after the start tag just read, as a tree builder would set it.
    fn state_after_start_tag(&self) -> Option<State> {
        if self.foreign > 0 {
            return None;
        }
        match self.tag_name.as_slice() {
            b"title" | b"textarea" => Some(State::RcData),
            b"script" => Some(State::ScriptData),
            b"style" | b"iframe" | b"noscript" | b"noembed" | b"noframes" | b"xmp" => {
                Some(State::RawText)
            }
            b"plaintext" => Some(State::PlainText),
            _ => None,
        }
    }

    fn emit_start_tag(&mut self) -> Option<State> {
        let next_state = self.state_after_start_tag();
        self.last_start_tag.clear();
        self.last_start_tag.extend_from_slice(&self.tag_name);
        let name = self.tag_name.as_slice();
        // Foreign elements close themselves with `/>`; HTML elements never do (but the
        // sink is told how the tag was written).
        let foreign = matches!(name, b"svg" | b"math");
        let closes_itself = self.self_closing && (foreign || self.foreign > 0);
        if foreign && !closes_itself {
            self.foreign += 1;
        }
        if let Some(hidden) = &mut self.hidden {
            hidden.depth += usize::from(hidden.name == name && !closes_itself);
            return next_state;
        }
        let name = String::from_utf8_lossy(name);
        if is_one_of(&name, &HIDDEN_ELEMENTS) {
            self.sink.other();
            if !closes_itself {
                self.hidden = Some(Hidden {
                    name: self.tag_name.clone(),
                    depth: 1,
                });
            }
            return next_state;
        }
        self.sink.start_tag(&StartTag {
            name: &name,
            self_closing: self.self_closing,
            attributes: &self.attributes[..self.kept],
        });
        next_state
    }

    fn emit_end_tag(&mut self) {
        let name = self.tag_name.as_slice();
        if matches!(name, b"svg" | b"math") {
            self.foreign = self.foreign.saturating_sub(1);
        }
        if let Some(hidden) = &mut self.hidden {
            if hidden.name == name {
                hidden.depth -= 1;
                if hidden.depth == 0 {
                    self.hidden = None;
                }
            }
            return;
        }
        self.sink.end_tag(&String::from_utf8_lossy(name));
    }

    /// A comment, doctype or the like has been read.
    fn emit_other(&mut self) {
        if self.hidden.is_none() {
            self.flush_text(true);
            self.sink.other();
        }
    }
}

impl<S: Sink> Emitter for TokenEmitter<S> {
    type Token = S::Chunk;

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.last_start_tag.clear();
        self.last_start_tag
            .extend_from_slice(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {
        if self.hidden.is_none() {
            self.flush_text(true);
        }
        self.sink.end();
    }

    fn emit_error(&mut self, _: Error) {}

    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<S::Chunk> {
        self.sink.take_chunk()
    }

    fn emit_string(&mut self, text: &[u8]) {
        if self.hidden.is_some() {
            return;
        }
        if self.text.is_empty() {
            // Most text comes as whole runs of whole characters: given as it is, not gathered.
            if let Ok(text) = simdutf8::basic::from_utf8(text) {
                self.sink.text(text);
                if self.sink.is_full() {
                    self.pause.set(true);
                }
                return;
            }
        }
        self.text.extend_from_slice(text);
        self.flush_text(false);
    }

    fn init_start_tag(&mut self) {
        self.kind = TagKind::Start;
        self.tag_name.clear();
        self.self_closing = false;
        self.kept = 0;
        self.slot = AttributeSlot::Dropped;
    }

    fn init_end_tag(&mut self) {
        self.init_start_tag();
        self.kind = TagKind::End;
    }

    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        self.end_attribute();
        if self.hidden.is_none() {
            self.flush_text(true);
        }
        match self.kind {
            TagKind::Start => self.emit_start_tag(),
            TagKind::End => {
                self.emit_end_tag();
                None
            }
        }
    }

    fn emit_current_comment(&mut self) {
        self.emit_other();
    }

    fn emit_current_doctype(&mut self) {
        self.emit_other();
    }

    fn set_self_closing(&mut self) {
        self.self_closing = true;
    }

    fn set_force_quirks(&mut self) {}

    fn push_tag_name(&mut self, name: &[u8]) {
        self.tag_name.extend_from_slice(name);
    }

    fn push_comment(&mut self, _: &[u8]) {}

    fn push_doctype_name(&mut self, _: &[u8]) {}

    fn init_doctype(&mut self) {}

    fn init_attribute(&mut self) {
        self.end_attribute();
        self.attribute_name.clear();
        self.slot = AttributeSlot::Undecided;
    }

    fn init_attribute_value(&mut self) {
        if self.slot == AttributeSlot::Undecided {
            self.decide_slot();
        }
    }

    fn push_attribute_name(&mut self, name: &[u8]) {
        if self.slot == AttributeSlot::Undecided {
            self.attribute_name.extend_from_slice(name);
        }
    }

    fn push_attribute_value(&mut self, value: &[u8]) {
        if self.slot == AttributeSlot::Undecided {
            self.decide_slot();
        }
        if let AttributeSlot::Kept(at) = self.slot {
            self.attributes[at].1.extend_from_slice(value);
        }
    }

    fn set_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn set_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.kind == TagKind::End
            && !self.last_start_tag.is_empty()
            && self.last_start_tag == self.tag_name
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&mut self) -> bool {
        self.foreign > 0
    }
}
