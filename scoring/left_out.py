"""What a read of a run's scores left out, and whose sessions it counted (scoring.selectors returns it with
every read; the dashboards say it on every chart: charts.annotate): sessions on unjudged scenarios, the
participants marked excluded, and the analysis population (studies/population.py) with its n."""

from __future__ import annotations

from dataclasses import dataclass

from studies.population import DEFAULT, Population


@dataclass(frozen=True)
class LeftOut:
    """Sessions the filters matched but the charts leave out: their scenario has no judgment to score
    against."""

    sessions: int = 0
    scenarios: tuple[str, ...] = ()
    applies: bool = True  # False for a table of no scores (the questionnaire's)
    # Sessions of participants marked by the exclusion rule, left out (excluded=exclude) or counted (include).
    excluded_sessions: int = 0
    excluded_participants: tuple[str, ...] = ()
    excluded_included: bool = False
    exclusion_on: bool = False
    # The analysis population (studies/population.py): what it is, what the chart counted in it (sessions;
    # for Table 1, participants), and the sessions and participants the filters matched outside it.
    population: Population = DEFAULT
    counted_sessions: int = 0
    counted_participants: int = 0
    population_sessions: int = 0
    population_participants: tuple[str, ...] = ()
    # Table 1 only: the population's participants without questionnaire answers (not started, or withdrawn
    # and their answers deleted), so that its N and this note agree.
    unanswered: tuple[str, ...] = ()

    def population_title(self) -> str:
        """The chart's subtitle's part: "population: completers only, n = 24 sessions"."""
        if not self.applies:
            return (
                f"population: {self.population.label()}, n = {self.counted_participants} participants"
                + self._answered_part()
            )
        return f"population: {self.population.label()}, n = {self.counted_sessions} sessions"

    def population_text(self) -> str:
        """The population in full, what it counted and what it left out."""
        who = self.population_participants
        named = ", ".join(who[:20]) + (f" and {len(who) - 20} more" if len(who) > 20 else "")
        counted = (
            f"{self.counted_participants} participant{'s' if self.counted_participants != 1 else ''}"
            # counted, never named: a withdrawn participant's code leaves every chart (withdrawal deletes)
            + self._answered_part()
            if not self.applies
            else f"{self.counted_sessions} session{'s' if self.counted_sessions != 1 else ''} of "
            f"{self.counted_participants} participant{'s' if self.counted_participants != 1 else ''}"
        )
        outside = (
            f"{len(who)} participant{'s' if len(who) != 1 else ''} outside it left out ({named})"
            if not self.applies
            else f"{self.population_sessions} session{'s' if self.population_sessions != 1 else ''} of "
            f"{len(who)} participant{'s' if len(who) != 1 else ''} outside it left out ({named})"
        )
        return (
            f"Population: {self.population.text()} (population={self.population.code()}): n = {counted}; "
            + (outside if who else "nobody matching the filters is outside it")
            + "."
        )

    def _answered_part(self) -> str:
        """Table 1's ", of them N answered the questionnaire (k without answers: ...)", or "" when all did."""
        if not self.unanswered:
            return ""
        k = len(self.unanswered)
        return (
            f", {self.counted_participants - k} of them with questionnaire answers "
            f"({k} without: not started, or withdrawn)"
        )

    def page_key(self, averaged_over: str) -> str:
        """What a card must share with its page for the page's one population note to speak for it: the
        population, its n, what is averaged, the unjudged and excluded sessions left out."""
        return "|".join(
            str(part)
            for part in (
                self.population.code(),
                self.applies,
                self.counted_sessions,
                self.counted_participants,
                len(self.unanswered),
                averaged_over,
                self.sessions,
                self.excluded_sessions,
                self.excluded_included,
            )
        )

    def card_line(self, averaged_over: str) -> str:
        """The one line a card shows where its population differs from the page's note."""
        return (
            f"This card differs from the note at the top: {self.population_title()}; averaged over "
            f"{averaged_over}."
        )

    def text(self) -> str:
        if not self.applies:
            return "No scores here, so no session is left out for lack of judgments."
        if not self.sessions:
            return "No session was left out: every scenario shown has judgments."
        return (
            f"{self.sessions} session{'s' if self.sessions != 1 else ''} on scenarios without any judgment "
            f"({', '.join(self.scenarios)}) left out: scored 0 against nothing, they would pull every mean "
            "down (add unjudged=include to count them)."
        )

    def excluded_text(self) -> str:
        """What the exclusion rule on agreement with the reference did to this chart or table."""
        who = len(self.excluded_participants)
        sessions = f"{self.excluded_sessions} session{'s' if self.excluded_sessions != 1 else ''}"
        if not self.applies:
            if not who:
                return "Excluded participants: none marked by the agreement rule."
            return (
                f"Excluded participants ({', '.join(self.excluded_participants)}): "
                f"{'counted' if self.excluded_included else 'left out'}."
            )
        if not who:
            return (
                "Excluded participants: none marked by the agreement rule."
                if self.exclusion_on
                else "Excluded participants: the study has no agreement rule."
            )
        if self.excluded_included:
            return (
                f"Excluded participants ({', '.join(self.excluded_participants)}): counted, {sessions} "
                "(excluded=include)."
            )
        return (
            f"Excluded participants ({', '.join(self.excluded_participants)}): {sessions} left out, marked "
            "by the study's agreement rule or a researcher (add excluded=include to count them)."
        )
